"""The weights the PyTorch frontend imports as `dense_resource` literals are read back from the
tensors they came from (`dync.frontends.pytorch.held_weights`), not one C call per element, and
only while those tensors still hold the imported data."""

import numpy as np
import pytest
import torch
from iree.compiler import ir
from torch import nn

from dync.backend import CompilerSession
from dync.dialects import literals
from dync.dialects.literals import LITERAL, hold_resource_data, literal_array
from dync.dialects.walk import ops_named
from dync.frontends.pytorch.export import import_module
from dync.passes import lower_control_flow
from dync.targets import resolve


def _weight_literals(module: ir.Module) -> list[ir.Operation]:
    return [op for op in ops_named(module.operation, LITERAL)
            if ir.RankedTensorType(op.attributes["value"].type).rank == 2]


def _imported(layer: nn.Module, context: ir.Context):
    """The imported program (which owns the literal) and the literal of `layer`'s weight."""
    program = import_module(layer, (torch.randn(3, layer.in_features),), None, context,
                            lower=lower_control_flow)
    (literal,) = _weight_literals(program.module)
    return program, literal


def test_an_imported_weight_is_read_from_its_tensor():
    torch.manual_seed(0)
    layer = nn.Linear(48, 40)
    with ir.Context() as context:
        _, literal = _imported(layer, context)
        attr = literal.attributes["value"]
        held = literals._HELD[literals._c_pointer(context)]
        assert literals._c_pointer(attr) in held
        np.testing.assert_array_equal(literal_array(literal), layer.weight.detach().numpy())


def test_a_weight_written_after_the_import_is_read_from_the_blob():
    torch.manual_seed(0)
    layer = nn.Linear(48, 40)
    imported = layer.weight.detach().clone()
    with ir.Context() as context:
        _, literal = _imported(layer, context)
        with torch.no_grad():
            layer.weight[1, 2] += 1.0  # an element the spot checks do not look at
        np.testing.assert_array_equal(literal_array(literal), imported.numpy())


def test_held_data_that_disagrees_with_the_blob_is_not_used():
    data = np.arange(12, dtype=np.float32)
    with ir.Context() as context, ir.Location.unknown():
        tensor = ir.RankedTensorType.get([3, 4], ir.F32Type.get())
        attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(data), "blob", tensor)
        vtensor = ir.Type.parse("!torch.vtensor<[3,4],f32>", context)
        context.allow_unregistered_dialects = True
        op = ir.Operation.create(LITERAL, results=[vtensor], attributes={"value": attr})
        hold_resource_data(attr, lambda: data + 1)
        np.testing.assert_array_equal(literal_array(op), data.reshape(3, 4))
        hold_resource_data(attr, lambda: data[:6])
        np.testing.assert_array_equal(literal_array(op), data.reshape(3, 4))


@pytest.mark.parametrize("watched", [True, False], ids=["ir-context", "iree-session"])
def test_what_a_context_held_goes_with_it(watched):
    layer = nn.Linear(8, 8)
    if watched:
        with ir.Context() as context:
            _imported(layer, context)
            key = literals._c_pointer(context)
            assert key in literals._HELD
        del context
    else:
        session = CompilerSession(resolve("llvm-cpu"))
        _imported(layer, session.context)
        key = literals._c_pointer(session.context)
        assert key in literals._HELD
        session.close()
    assert key not in literals._HELD

