"""Arguments handed to IREE without a copy, where the module provably writes none.

IREE 3.13 may compute an in-place op in an imported argument's buffer and return an argument's
buffer as a result (`lit/upstream/iree-writes-imported-argument.mlir`), so the CPU runtime
imports the caller's arrays only for modules whose stream-phase IR
`dync.iree_mends.argument_writes` finds writing and returning none (`report.arguments`,
`manifest.reads_arguments_only`). Each construct below runs on an input large enough to be
imported (32 KiB; the tests' conftest imports every size) and is checked against eager, with
the caller's tensor left as it was and no result sharing its memory, whichever way the module
went.
"""

import json

import numpy as np
import pytest
import torch
from torch.export import Dim

import dync
from dync.runtime import invoke


class _SliceIntoClone(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y[:, 0] = 5.0
        return y


class _SliceIntoCloneThenScaled(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y[:, 1:3] = 0.0
        return y * 2


class _RowsPickedByData(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y[x[:, 0] > 0] = -1.0
        return y


class _ScatterIntoClone(torch.nn.Module):
    def forward(self, x):
        return x.clone().scatter_(1, x.argmax(1, keepdim=True), 0.0)


class _Sort(torch.nn.Module):
    def forward(self, x):
        return x.sort(dim=1)[0]


class _Cumsum(torch.nn.Module):
    def forward(self, x):
        return x.cumsum(1)


class _ReturnsItsArgument(torch.nn.Module):
    def forward(self, x):
        return x, x.sum(1)


class _ReturnsAView(torch.nn.Module):
    def forward(self, x):
        return x[1:], x[:, :4].reshape(-1)


class _BranchReturnsItsArgument(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return x * 2


class _ReadsOnly(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, -1) * x.sum(1, keepdim=True)


class _LoopOverRows(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        for i in range(1, 4):
            y[i] = y[i - 1] * 0.5 + x[i]
        return y


class _HalvedWhileLarge(torch.nn.Module):
    """The argument is the loop's value on its first step, an allocation after: IREE releases
    it at the end with a `stream.resource.dealloca` that prefers its origin (no write)."""

    def forward(self, x):
        h = x
        steps = 0
        while h.abs().max() > 0.5 and steps < 3:
            h = h * 0.5
            steps += 1
        return h.mean(1)


CONSTRUCTS = {
    "the argument carried by a while loop": _HalvedWhileLarge,
    "a slice assigned in a clone": _SliceIntoClone,
    "a slice assigned in a clone, then scaled": _SliceIntoCloneThenScaled,
    "rows picked by data assigned in a clone": _RowsPickedByData,
    "scatter_ into a clone": _ScatterIntoClone,
    "sort": _Sort,
    "cumsum": _Cumsum,
    "the argument returned": _ReturnsItsArgument,
    "views of the argument returned": _ReturnsAView,
    "the argument returned from a branch": _BranchReturnsItsArgument,
    "reads only": _ReadsOnly,
    "rows updated in a loop over a clone": _LoopOverRows,
}


@pytest.fixture(scope="module", params=sorted(CONSTRUCTS))
def compiled(request):
    model = CONSTRUCTS[request.param]()
    example = torch.randn(64, 128)
    return model, dync.compile(model, (example,), dynamic_shapes=({0: Dim("rows", min=4,
                                                                          max=256)},),
                               mode="graph")


def _results(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def test_the_callers_tensor_is_left_as_it_was(compiled):
    model, module = compiled
    # A shape's second call takes the runtime's direct path (`Function.tensor_runner`).
    for rows, sign in ((64, 1.0), (200, -1.0), (64, -1.0), (200, 1.0)):
        x = sign * torch.randn(rows, 128).abs()
        before = x.clone()
        got = module(x)
        torch.testing.assert_close(x, before, rtol=0, atol=0)
        for result, expected in zip(_results(got), _results(model(before)), strict=True):
            torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-4)
            assert not np.shares_memory(result.numpy(), x.numpy())


def test_the_report_says_how_arguments_go(compiled):
    model, module = compiled
    arguments = module.report.arguments
    assert module.manifest.reads_arguments_only == (arguments == "imported")
    if isinstance(model, _ReadsOnly | _Cumsum | _HalvedWhileLarge):
        assert arguments == "imported"
    if isinstance(model, _ReturnsItsArgument | _SliceIntoClone | _BranchReturnsItsArgument):
        assert arguments.startswith("copied: "), arguments


def test_a_saved_module_keeps_the_verdict(tmp_path):
    module = dync.compile(_ReadsOnly(), (torch.randn(64, 128),), mode="graph")
    path = module.save(tmp_path / "m.vmfb")
    assert dync.load(path).manifest.reads_arguments_only
    manifest = path.with_name("m.manifest.json")
    data = json.loads(manifest.read_text())
    data["reads_arguments_only"] = "yes"
    manifest.write_text(json.dumps(data))
    with pytest.raises(dync.ModuleFormatError, match="reads_arguments_only is not a bool"):
        dync.load(path)


def test_only_large_aligned_writable_arrays_are_imported(monkeypatch):
    monkeypatch.setattr(invoke, "_IMPORT_FROM", 16384)  # conftest imports every size
    module = dync.compile(_ReadsOnly(), (torch.randn(64, 128),), mode="graph")
    function = module._function()
    allocate, args = function._allocate, (function._memory_type, function._usage,
                                          function.device)
    element_type = function._element_type(np.dtype(np.float32))
    storage = torch.randn(64 * 128 + 16).numpy()
    aligned = storage[(-storage.ctypes.data % 64) // 4:][:64 * 128]
    assert aligned.ctypes.data % 64 == 0

    def shares(array) -> bool:
        view = allocate(*args, array, element_type)
        return np.shares_memory(view.map().asarray(array.shape, array.dtype), array)

    assert shares(aligned)
    assert not shares(storage[1:][:64 * 128])  # 4 bytes off
    assert not shares(aligned[:invoke._IMPORT_FROM // 4 - 1])  # small
    read_only = aligned.copy()
    read_only.flags.writeable = False
    assert not shares(read_only)


def test_a_misaligned_view_runs_copied():
    model = _ReadsOnly()
    module = dync.compile(model, (torch.randn(64, 128),), mode="graph")
    storage = torch.randn(64 * 128 + 1)
    x = storage[1:].view(64, 128)
    torch.testing.assert_close(module(x), model(x), rtol=1e-5, atol=1e-5)


def test_repeated_calls_hand_iree_the_tensors_themselves():
    """On a shape's later calls a module that reads its arguments only takes each contiguous,
    aligned CPU tensor through DLPack, no copy; any other tensor is copied, with eager's
    result: a transposed view, a negative view (whose memory DLPack would hand over
    unnegated), a tensor 4 bytes off 64-byte alignment. One that needs grad goes as itself."""
    model = _ReadsOnly()
    module = dync.compile(model, (torch.randn(64, 128),), mode="graph")
    assert module.manifest.reads_arguments_only
    function = module._function()
    copies, copy = [], function._copy

    def counted(*args):
        copies.append(args[3])
        return copy(*args)

    function._copy = counted
    module._fast.clear()  # the runners built by dync.compile's check of the first call
    x = torch.randn(64, 128)
    module(x)  # the shape's first call: the checked path, which builds the direct one
    assert "tensor_runner" in next(iter(module._fast.values())).__qualname__
    storage = torch.randn(64 * 128 + 1)
    for kind, value, copied in (
            ("contiguous", x, False),
            ("needs grad", x.clone().requires_grad_(True), False),
            ("transposed", torch.randn(128, 64).t(), True),
            ("negative view", torch._neg_view(x), True),
            ("misaligned", storage[1:].view(64, 128), True)):
        copies.clear()
        torch.testing.assert_close(module(value), model(value.detach()), rtol=1e-5, atol=1e-5,
                                   msg=kind)
        assert bool(copies) == copied, kind


_CALLEES = {
    "external": "util.func private @callee(%view: !hal.buffer_view) -> !hal.buffer_view",
    "hands_back": """util.func private @callee(%view: !hal.buffer_view) -> !hal.buffer_view {
    util.return %view : !hal.buffer_view
  }""",
    "queries": """util.func private @callee(%view: !hal.buffer_view) -> index {
    %rank = hal.buffer_view.rank<%view : !hal.buffer_view> : index
    util.return %rank : index
  }"""}


@pytest.mark.parametrize("callee, verdict", [
    ("external", "util.call takes an argument"),
    ("hands_back", "util.return takes an argument"),
    ("queries", None)])
def test_an_argument_passed_to_a_call(callee, verdict):
    """A call may hand an argument's buffer view out: an external function always may, one
    with a body where its own arguments are used so."""
    from iree.compiler import ir
    from iree.compiler.api import Session

    from dync.iree_mends import argument_writes

    result = "index" if callee == "queries" else "!hal.buffer_view"
    text = f"""module {{
  {_CALLEES[callee]}
  util.func public @main(%arg0: !hal.buffer_view) -> {result} {{
    %0 = util.call @callee(%arg0) : (!hal.buffer_view) -> {result}
    util.return %0 : {result}
  }}
}}"""
    session = Session()
    try:
        with session.context:
            found = argument_writes(ir.Module.parse(text).operation)
    finally:
        session.close()
    if verdict is None:
        assert found is None, found
    else:
        assert found is not None and found.startswith(verdict), found
