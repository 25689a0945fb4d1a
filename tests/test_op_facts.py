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
        assert facts.traits, f"{name} says nothing"
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


def test_convolutions_and_pools_say_where_their_window_is():
    windowed = op_facts.with_trait(op_facts.CONVOLUTION) | op_facts.with_trait(op_facts.POOL)
    assert windowed == {name for name, facts in OPS.items() if facts.window}
    for name in windowed:
        w = OPS[name].window
        operands = [i for i in (w.stride, w.padding, w.dilation, w.ceil_mode, w.transposed,
                                w.groups) if i is not None]
        assert len(set(operands)) == len(operands) and min(operands) >= 2, name
        assert (w.spatial is None) == name.endswith("convolution"), name
    assert op_kinds.CONVOLUTIONS_2D == {"torch.aten.conv2d", "torch.aten.convolution",
                                        "torch.aten._convolution"}
    assert op_kinds.PADDED["torch.aten.max_pool3d"] == 3
    assert op_kinds.PADDED["torch.aten.conv1d"] == 4


def test_rdp_gives_every_convolution_and_pool_the_window_rules():
    for name in op_facts.with_trait(op_facts.CONVOLUTION):
        assert rules.RULES[name].rule.__name__ == "_conv", name
    for name in op_facts.with_trait(op_facts.POOL):
        assert rules.RULES[name].rule.__name__ == "_pool", name
