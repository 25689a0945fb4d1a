"""ONNX `RNN`, `GRU` and `LSTM` layers that IREE's importer (torch-mlir's
convert-torch-onnx-to-torch) does not lower, or lowers to other values than the ONNX spec's,
rewritten before import into ONNX ops it lowers right:

- `direction` "reverse" (not lowered) and "bidirectional" (not lowered for RNN and GRU; for
  LSTM rewritten too, one lowering for both directions);
- `RNN` and `GRU` over a sequence of dynamic length (their lowerings size a buffer by the
  dynamic dim, -1: IREE fails to compile);
- `sequence_lens` (each sequence stops at its own length);
- `LSTM` with peepholes (input `P`; the lowering ignores them).

Each direction is a Scan over time of one step of the cell (a Loop where the length is dynamic,
`onnx_loops`), the input's projection by `W` computed for all steps first (one MatMul); a
step's states only advance where `t < sequence_lens[b]`, and `Y` is zero past a sequence's
end. The reverse direction runs on the input reversed in time (within each sequence's length),
its `Y` reversed back; a bidirectional layer's directions are concatenated along the direction
axis. Everything is computed in layout 0 (time first), transposed in and out for layout 1.
Left to the importer (which names the op): activations without an ONNX op (or whose
parameters are missing) and lists of activations that do not split evenly between the
directions; an `LSTM` with peepholes is then refused rather than lowered wrong.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from . import onnx_loops
from .onnx_graphs import (
    GraphEditor,
    attribute,
    named_shape,
    refuse_wrong_values,
    reversed_along,
    reversed_within,
)

#: Per op: the inputs after X, W, R, B, sequence_lens that hold per-direction states.
_STATE_INPUTS = {"RNN": (5,), "GRU": (5,), "LSTM": (5, 6)}


def _recurrent(node: onnx.NodeProto, g: GraphEditor) -> bool:
    op, inputs = node.op_type, list(node.input) + [""] * (8 - len(node.input))
    peepholes, lengths = op == "LSTM" and bool(inputs[7]), inputs[4]
    direction = attribute(node, "direction", "forward")
    batch_first = attribute(node, "layout", 0) == 1
    shape = named_shape(g.types.get(inputs[0]))
    if shape is not None and batch_first:
        shape = [shape[1], shape[0], *shape[2:]]
    time = shape[0] if shape is not None else None
    if (direction == "forward" and not peepholes and not lengths
            and (op == "LSTM" or isinstance(time, int))):
        return False  # the importer's lowering is right
    directions = ("forward", "reverse") if direction == "bidirectional" else (direction,)
    per_direction = _split_activations(node, len(directions))
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(inputs[0])) if shape else None
    cells = [_Cell(op, {**_attributes(node), **a}, dtype) for a in per_direction or []]
    if (g.opset < 10 or shape is None or len(shape) != 3 or not cells
            or not all(c.supported() for c in cells)):
        return _left(node, peepholes)
    x = g.op("Transpose", inputs[0], perm=[1, 0, 2]) if batch_first else inputs[0]
    g.types[x] = helper.make_tensor_type_proto(g.elem_type(inputs[0]), shape)
    layer = _Layer(g, op, cells[0].attributes["hidden_size"], x, shape, lengths)
    ys, finals = [], []
    for d, (way, cell) in enumerate(zip(directions, cells, strict=True)):
        weights = [_direction(g, inputs[i], 0, d) for i in (1, 2, 3)]
        states = [_direction(g, inputs[i], int(batch_first), d) for i in _STATE_INPUTS[op]]
        if batch_first:
            states = [s and g.op("Transpose", s, perm=[1, 0, 2]) for s in states]
        peep = _direction(g, inputs[7], 0, d) if peepholes else ""
        y, last = layer.run(cell, way == "reverse", weights, states, peep)
        ys.append(g.unsqueeze(y, [1]))
        finals.append([g.unsqueeze(f, [0]) for f in last])
    results = [_concat(g, ys, 1)] + [_concat(g, [f[k] for f in finals], 0)
                                     for k in range(len(finals[0]))]
    for k, name in enumerate(node.output):
        if name and k < len(results):
            if batch_first:  # Y [seq, dir, batch, h] -> [batch, seq, dir, h]; states swap
                g.op("Transpose", results[k], perm=[2, 0, 1, 3] if k == 0 else [1, 0, 2],
                     out=name)
            else:
                g.op("Identity", results[k], out=name)
    return True


def _left(node: onnx.NodeProto, peepholes: bool) -> bool:
    """Left to the importer, which names the op; refused if it would ignore peepholes."""
    if peepholes:
        refuse_wrong_values(node, "with peepholes (input P)", "the peephole weights are ignored")
    return False


def _attributes(node: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute
            if a.name not in ("activations", "activation_alpha", "activation_beta")}


def _concat(g: GraphEditor, parts: list[str], axis: int) -> str:
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=axis)


def _split_activations(node: onnx.NodeProto, directions: int) -> list[dict] | None:
    """The `activations`, `activation_alpha` and `activation_beta` attributes of each
    direction's layer; None where a list does not split evenly between the directions."""
    split = [{} for _ in range(directions)]
    for name in ("activations", "activation_alpha", "activation_beta"):
        values = attribute(node, name)
        if values is None:
            continue
        values = [v.decode() if isinstance(v, bytes) else v for v in values]
        if len(values) % directions:
            return None
        share = len(values) // directions
        for d in range(directions):
            split[d][name] = values[d * share:(d + 1) * share]
    return split


def _direction(g: GraphEditor, name: str, axis: int, index: int) -> str:
    """`name`'s slice `index:index + 1` along `axis` (its direction axis); '' for ''."""
    if not name:
        return ""
    return g.op("Slice", name, g.const([index], np.int64), g.const([index + 1], np.int64),
                g.const([axis], np.int64))


#: Each op's gates (in the order of W's rows) and default activations.
_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                        "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
#: Activations that are one ONNX op of the same name, with their (alpha, beta) defaults.
_ACTIVATION_OPS = {"Relu": (), "Tanh": (), "Sigmoid": (), "Softsign": (), "Softplus": (),
                   "LeakyRelu": (0.01,), "ThresholdedRelu": (1.0,), "Elu": (1.0,),
                   "HardSigmoid": (0.2, 0.5)}


class _Cell:
    """One direction's cell: its op, attributes, activations (with their parameters, by
    position in the list, as ONNX's reference reads them) and clip."""

    def __init__(self, op: str, attributes: dict, dtype) -> None:
        self.op, self.attributes, self.dtype = op, attributes, dtype
        names = attributes.get("activations") or _DEFAULT_ACTIVATIONS[op]
        alphas = attributes.get("activation_alpha") or []
        betas = attributes.get("activation_beta") or []
        self.activations = [(n, alphas[i] if i < len(alphas) else None,
                             betas[i] if i < len(betas) else None) for i, n in enumerate(names)]
        self.clip = attributes.get("clip")

    def supported(self) -> bool:
        return len(self.activations) == len(_DEFAULT_ACTIVATIONS[self.op]) and all(
            name in _ACTIVATION_OPS or (name in ("Affine", "ScaledTanh") and None not in (
                alpha, beta)) for name, alpha, beta in self.activations)

    def act(self, e: GraphEditor, k: int, x: str) -> str:
        """Activation `k` of `x` (clipped first, if the layer clips)."""
        if self.clip is not None:
            x = e.op("Max", e.op("Min", x, e.const(self.clip, self.dtype)),
                     e.const(-self.clip, self.dtype))
        name, alpha, beta = self.activations[k]
        if name == "Affine":
            return e.op("Add", e.op("Mul", x, e.const(alpha, self.dtype)),
                        e.const(beta, self.dtype))
        if name == "ScaledTanh":
            return e.op("Mul", e.op("Tanh", e.op("Mul", x, e.const(beta, self.dtype))),
                        e.const(alpha, self.dtype))
        given = {p: float(v if v is not None else default) for p, v, default in
                 zip(("alpha", "beta"), (alpha, beta), _ACTIVATION_OPS[name], strict=False)}
        return e.op(name, x, **given)


def _gate(e: GraphEditor, x: str, k: int, hidden: int, last: int | None = None) -> str:
    """The columns of gate `k` (to gate `last`, excluded, if given) of `x` ([..., gates *
    hidden])."""
    return e.op("Slice", x, e.const([k * hidden], np.int64),
                e.const([(last or k + 1) * hidden], np.int64), e.const([-1], np.int64))


class _Layer:
    """The directions of one layer over the time-first input `x` ([seq, batch, input]) of
    `shape`, with its `sequence_lens` (or '')."""

    def __init__(self, g: GraphEditor, op: str, hidden: int, x: str,
                 shape: list[int | str], lengths: str) -> None:
        self.g, self.op, self.hidden, self.x, self.shape = g, op, hidden, x, shape
        self.elem_type = g.elem_type(x)
        self.lengths = lengths and g.op("Cast", lengths, to=onnx.TensorProto.INT64)
        self.mask = None
        if lengths:  # [seq, batch, 1]: whether step t is within sequence b
            t = g.op("Range", g.const(0, np.int64), g.size(x, 0), g.const(1, np.int64))
            self.mask = g.op("Less", g.unsqueeze(t, [1]), g.unsqueeze(self.lengths, [0]))
            self.mask = g.unsqueeze(self.mask, [2])
            g.types[self.mask] = helper.make_tensor_type_proto(onnx.TensorProto.BOOL,
                                                               [shape[0], shape[1], 1])

    def reversed(self, x: str) -> str:
        """`x` ([seq, batch, ...]) reversed in time, within each sequence's length if given."""
        if not self.lengths:
            size = self.shape[0] if isinstance(self.shape[0], int) else None
            return reversed_along(self.g, x, 0, size)
        return reversed_within(self.g, x, self.lengths, 0, 1, rank=3)

    def run(self, cell: _Cell, backwards: bool, weights: list[str], states: list[str],
            peepholes: str) -> tuple[str, list[str]]:
        """One direction: its `Y` ([seq, batch, hidden]) and final states ([batch, hidden])."""
        g, op, hidden = self.g, self.op, self.hidden
        dtype, elem_type, gates = cell.dtype, self.elem_type, _GATES[op]
        seq, batch = self.shape[0], self.shape[1]
        w, r, b = weights
        x = self.reversed(self.x) if backwards else self.x
        projected = g.op("MatMul", x, g.op("Transpose", g.squeeze(w, [0]), perm=[1, 0]))
        recurrence = g.op("Transpose", g.squeeze(r, [0]), perm=[1, 0])
        recurrence_bias = None
        if b:
            biases = g.squeeze(b, [0])
            projected = g.op("Add", projected, _gate(g, biases, 0, hidden, gates))
            recurrence_bias = _gate(g, biases, gates, hidden, 2 * gates)
        initial = []
        for given in states:
            if given:
                initial.append(g.squeeze(given, [0]))
                continue
            size = g.op("Concat", g.sizes(x, 1, 2), g.const([hidden], np.int64), axis=0)
            zeros = g.op("ConstantOfShape", size, value=onnx.numpy_helper.from_array(
                np.zeros([1], dtype)))
            g.declared.append(helper.make_tensor_value_info(zeros, elem_type, [batch, hidden]))
            initial.append(zeros)
        body = GraphEditor(onnx.GraphProto(), g.opset, {})
        body.taken = g.taken  # one namespace: a subgraph's names may not shadow the graph's
        state_in = [body.fresh(f"{op.lower()}_{s}") for s in ("h", "c")[:len(states)]]
        xw, m = body.fresh(f"{op.lower()}_xw"), body.fresh(f"{op.lower()}_within")
        new = _step(g, body, cell, hidden, xw, state_in, recurrence, recurrence_bias,
                    g.squeeze(peepholes, [0]) if peepholes else None)
        if self.mask is not None:  # past its end, a sequence keeps its states and outputs 0
            y_t = body.op("Where", m, new[0], body.const(0, dtype))
            new = [body.op("Where", m, n, s) for n, s in zip(new, state_in, strict=True)]
        else:
            y_t = body.op("Identity", new[0])
        state_out = [body.op("Identity", n) for n in new]
        scanned = [(xw, [batch, gates * hidden], projected)]
        if self.mask is not None:  # the same reversed within each length
            scanned.append((m, [batch, 1], self.mask))
        graph = helper.make_graph(
            body.emitted, g.fresh(f"{op.lower()}_step"),
            [helper.make_tensor_value_info(n, elem_type, [batch, hidden]) for n in state_in]
            + [helper.make_tensor_value_info(n, onnx.TensorProto.BOOL if n == m else elem_type,
                                             dims) for n, dims, _ in scanned],
            [helper.make_tensor_value_info(n, elem_type, [batch, hidden])
             for n in [*state_out, y_t]])
        g.types[projected] = helper.make_tensor_type_proto(elem_type,
                                                           [seq, batch, gates * hidden])
        finals = [g.fresh(f"{op.lower()}_final") for _ in state_in]
        y = g.fresh(f"{op.lower()}_y")
        onnx_loops.scan(helper.make_node("Scan", [*initial, *(v for _, _, v in scanned)],
                                         [*finals, y], num_scan_inputs=len(scanned),
                                         body=graph), g)
        g.declared.append(helper.make_tensor_value_info(y, elem_type, [seq, batch, hidden]))
        return (self.reversed(y) if backwards else y), finals


def _step(g: GraphEditor, e: GraphEditor, cell: _Cell, hidden: int, xw: str, states: list[str],
          recurrence: str, bias: str | None, peepholes: str | None) -> list[str]:
    """One time step of `cell`, emitted into the body `e`: the new hidden state (and cell
    state) from the step's input projection `xw` ([batch, gates * hidden], W's bias added),
    the states, and the recurrence weights ([hidden, gates * hidden]) with their bias, which
    are sliced by gate in the graph `g` (once, not per step)."""
    op, attributes, h = cell.op, cell.attributes, states[0]

    def recur(state: str, first: int, last: int) -> str:
        """state x R^T (+ Rb) for gates first..last-1."""
        product = e.op("MatMul", state, _gate(g, recurrence, first, hidden, last))
        if bias is None:
            return product
        return e.op("Add", product, _gate(g, bias, first, hidden, last))

    if op == "RNN":
        return [cell.act(e, 0, e.op("Add", xw, recur(h, 0, 1)))]
    if op == "GRU":  # gates z, r, h
        zr = e.op("Add", _gate(e, xw, 0, hidden, 2), recur(h, 0, 2))
        z, r = cell.act(e, 0, _gate(e, zr, 0, hidden)), cell.act(e, 0, _gate(e, zr, 1, hidden))
        if attributes.get("linear_before_reset", 0):
            candidate = e.op("Mul", r, recur(h, 2, 3))
        else:
            candidate = recur(e.op("Mul", r, h), 2, 3)
        h_tilde = cell.act(e, 1, e.op("Add", _gate(e, xw, 2, hidden), candidate))
        one = e.const(1, cell.dtype)
        return [e.op("Add", e.op("Mul", e.op("Sub", one, z), h_tilde), e.op("Mul", z, h))]
    c = states[1]
    pre = e.op("Add", xw, recur(h, 0, 4))  # gates i, o, f, c; peepholes i, o, f
    p = [None] * 3 if peepholes is None else [_gate(g, peepholes, k, hidden) for k in range(3)]

    def peeped(k: int, state: str) -> str:
        gate = _gate(e, pre, k, hidden)
        return gate if p[k] is None else e.op("Add", gate, e.op("Mul", p[k], state))

    i = cell.act(e, 0, peeped(0, c))
    if attributes.get("input_forget", 0):
        f = e.op("Sub", e.const(1, cell.dtype), i)
    else:
        f = cell.act(e, 0, peeped(2, c))
    c_new = e.op("Add", e.op("Mul", f, c), e.op("Mul", i, cell.act(e, 1, _gate(e, pre, 3, hidden))))
    o = cell.act(e, 0, peeped(1, c_new))
    return [e.op("Mul", o, cell.act(e, 2, c_new)), c_new]


RULES = {op: _recurrent for op in _STATE_INPUTS}
