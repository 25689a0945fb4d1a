"""The one table of op facts (`dync.analysis.op_facts`) is consistent, and the passes' sets and
RDP's generic rules are read from it."""

from dync.analysis import op_facts, op_kinds
from dync.analysis.op_facts import OPS
from dync.passes.rdp import rules

TRAITS = {v for k, v in vars(op_facts).items() if k.isupper() and isinstance(v, str)
          and k not in ("SAME", "BROADCAST")}
MEMORY = (op_facts.VIEW, op_facts.ELEMENTWISE, op_facts.SCATTER)


def test_every_op_has_known_traits_and_one_memory_behaviour():
    for name, facts in OPS.items():
        assert facts.traits <= TRAITS, (name, facts.traits - TRAITS)
        assert facts.traits or facts.padding is not None, f"{name} says nothing"
        assert len(facts.traits & set(MEMORY)) <= 1, (name, facts.traits)
        assert facts.shape in (None, op_facts.SAME, op_facts.BROADCAST), name


def test_the_passes_sets_are_queries_of_the_table():
    assert op_kinds.VIEWS == op_facts.with_trait(op_facts.VIEW)
    assert op_kinds.ELEMENTWISE == op_facts.with_trait(op_facts.ELEMENTWISE)
    assert op_kinds.PADDED == op_facts.PADDING_OPERAND
    assert "torch.aten.softmax.int" in op_facts.SAME_SHAPE - op_kinds.ELEMENTWISE
    assert "torch.aten.index_put" in op_facts.SAME_SHAPE & op_kinds.SCATTERS


def test_rdp_gives_the_table_s_generic_shape_rules():
    for name in op_facts.SAME_SHAPE:
        assert rules.RULES[name].rule is rules._same, name
    for name in op_facts.BROADCASTING:
        assert rules.RULES[name].rule.__name__ == "_broadcast", name


def test_convolution_operands():
    for name, groups in op_facts.GROUPS_OPERAND.items():
        assert op_facts.CONVOLUTION_2D in OPS[name].traits and OPS[name].padding == 4
        assert groups > OPS[name].padding
