"""dync-pretranspose-weights: a linear under an early exit gets its weight transposed at compile
time, and the compiled model agrees with eager on both paths, with and without the pass. And
attention reaches IREE as two matmuls and a softmax, never as IREE's fused attention dispatch
(15-25x slower on the CPU), whether the model writes the chain or calls SDPA."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

import dync
from dync.dialects.literals import literal_array, make_literal
from dync.passes import DEFAULT_PIPELINE

SEQ = Dim("seq", min=2, max=32)


class GatedAttention(nn.Module):
    """Self-attention, then a gate: one path runs a linear head, the other returns early."""

    def __init__(self, width=16):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(width, width) for _ in range(3))
        self.gate = nn.Linear(width, 1)
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        a = torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1) @ v
        pooled = a.mean(1)
        if self.gate(pooled).sum() > 0:
            return self.head(a).mean(1)
        return pooled[:, :4] * 0.5


def _inputs():
    gen = torch.Generator().manual_seed(3)
    return [torch.randn(1, int(n), 16, generator=gen) for n in torch.randint(2, 33, (16,), generator=gen)]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return GatedAttention().eval()


@pytest.fixture(scope="module")
def compiled(model, tmp_path_factory):
    ir_path = tmp_path_factory.mktemp("fuse") / "fused.mlir"
    module = dync.compile(model, (torch.randn(1, 8, 16),), dynamic_shapes=({1: SEQ},),
                          dump_ir=ir_path)
    return module, ir_path.read_text()


def test_the_attention_stays_a_chain_and_the_gated_head_has_no_linear(compiled):
    _, text = compiled
    assert "torch.aten.scaled_dot_product_attention" not in text
    # One softmax: the op, or its form after dync-decompose-softmax (one amax).
    assert text.count("torch.aten.softmax") + text.count("torch.aten.amax") == 1
    # q, k, v and the gate run unconditionally and keep their linear (IREE folds those
    # transposes); the head runs under the gate, over a batched input, and becomes a matmul.
    assert text.count("torch.aten.linear") == 4
    assert "dync-pretranspose-weights" in DEFAULT_PIPELINE


def _pooled(model, x):
    q, k, v = model.q(x), model.k(x), model.v(x)
    return (torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1) @ v).mean(1)


@pytest.mark.parametrize("pretransposed", [True, False],
                         ids=["default", "without dync-pretranspose-weights"])
def test_both_paths_match_eager(model, compiled, pretransposed):
    module = compiled[0] if pretransposed else dync.compile(
        model, (torch.randn(1, 8, 16),), dynamic_shapes=({1: SEQ},),
        passes=[p for p in DEFAULT_PIPELINE if p != "dync-pretranspose-weights"])
    paths = set()
    with torch.no_grad():
        for x in _inputs():
            paths.add(bool(model.gate(_pooled(model, x)).sum() > 0))
            torch.testing.assert_close(module(x), model(x), rtol=1e-4, atol=1e-5)
    assert paths == {True, False}


class Sdpa(nn.Module):
    """`F.scaled_dot_product_attention` as models call it: 4 heads of 8 over a dynamic
    sequence, with one of SDPA's options."""

    def __init__(self, option: str):
        super().__init__()
        self.option = option

    def forward(self, q, k, v):
        n = q.shape[-2]
        if self.option == "bool mask":  # padding: the last key of every row is masked
            keep = (torch.arange(n) < n - 1).expand(n, n)
            return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        if self.option == "float mask, a row left empty":
            mask = torch.zeros(n, n)
            mask[0] = float("-inf")
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        if self.option == "causal":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if self.option == "scale":
            return F.scaled_dot_product_attention(q, k, v, scale=0.3)
        if self.option == "grouped query":
            return F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v)


@pytest.mark.parametrize("option", ["plain", "bool mask", "float mask, a row left empty",
                                    "causal", "scale", "grouped query"])
def test_sdpa_reaches_iree_as_matmuls_and_matches_eager(option, tmp_path):
    model = Sdpa(option)
    example = tuple(torch.randn(1, 4, 6, 8) for _ in range(3))
    spec = tuple({2: SEQ} for _ in range(3))
    compiled = dync.compile(model, example, dynamic_shapes=spec, mode="graph",
                            dump_ir=tmp_path / "ir.mlir")
    assert "scaled_dot_product_attention" not in (tmp_path / "ir.mlir").read_text()
    gen = torch.Generator().manual_seed(1)
    for n in (2, 5, 17):
        inputs = tuple(torch.randn(1, 4, n, 8, generator=gen) for _ in range(3))
        torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=1e-4, atol=1e-5)


def test_literal_data_round_trips_through_a_dense_resource_blob():
    from iree.compiler import ir

    weights = np.arange(1, 7, dtype="<f4").reshape(2, 3)
    blob = "0x04000000" + weights.tobytes().hex()
    text = ("module { func.func @f() -> !torch.vtensor<[2,3],f32> {\n"
            "  %0 = torch.vtensor.literal(dense_resource<w> : tensor<2x3xf32>) : "
            "!torch.vtensor<[2,3],f32>\n  return %0 : !torch.vtensor<[2,3],f32>\n} }\n"
            f'{{-#\n  dialect_resources: {{ builtin: {{ w: "{blob}" }} }}\n#-}}')
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        literal = module.body.operations[0].regions[0].blocks[0].operations[0]
        np.testing.assert_array_equal(literal_array(literal), weights)
        copy = make_literal(weights.T, literal, ir.InsertionPoint(literal))
        assert "dense_resource" in str(copy.owner)
        np.testing.assert_array_equal(literal_array(copy.owner), weights.T)
