"""Small ONNX models built in code (no downloads) for the ONNX frontend tests.

Every builder draws its weights from a fixed numpy seed, so a model and its reference
outputs are the same on every run.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IN_FEATURES = 8
HIDDEN = 16
OUT_FEATURES = 4


def _weights(seed: int, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for s in shapes]


def _model(graph: onnx.GraphProto, opset: int = OPSET) -> onnx.ModelProto:
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="dync-tests",
    )
    # The onnx package may be newer than the onnxruntime/reference evaluators people use.
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _if_weights() -> list[np.ndarray]:
    return _weights(
        0,
        (IN_FEATURES, HIDDEN),
        (HIDDEN,),
        (HIDDEN, OUT_FEATURES),
        (IN_FEATURES, OUT_FEATURES),
        (OUT_FEATURES,),
        (OUT_FEATURES,),
    )


def if_model(dim_param: str = "batch") -> onnx.ModelProto:
    """`x: float32[batch, 8]`; if ReduceSum(x) > 0: Relu(x@W1+b1)@W2 else Relu(x@W3+b3)+b4.

    The branches differ in the work they do (two MatMuls vs. one) and both return
    `float32[batch, 4]`.
    """
    w1, b1, w2, w3, b3, b4 = _if_weights()
    inits = [
        numpy_helper.from_array(a, name)
        for a, name in ((w1, "W1"), (b1, "b1"), (w2, "W2"), (w3, "W3"), (b3, "b3"), (b4, "b4"))
    ]
    inits.append(numpy_helper.from_array(np.array(0.0, np.float32), "zero"))
    then_graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W1"], ["t_mm1"], name="then_matmul1"),
            helper.make_node("Add", ["t_mm1", "b1"], ["t_add1"], name="then_add1"),
            helper.make_node("Relu", ["t_add1"], ["t_relu"], name="then_relu"),
            helper.make_node("MatMul", ["t_relu", "W2"], ["t_out"], name="then_matmul2"),
        ],
        "then_branch",
        [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [dim_param, OUT_FEATURES])],
    )
    else_graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W3"], ["e_mm"], name="else_matmul"),
            helper.make_node("Add", ["e_mm", "b3"], ["e_add"], name="else_add"),
            helper.make_node("Relu", ["e_add"], ["e_relu"], name="else_relu"),
            helper.make_node("Add", ["e_relu", "b4"], ["e_out"], name="else_bias"),
        ],
        "else_branch",
        [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [dim_param, OUT_FEATURES])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0, name="total"),
            helper.make_node("Greater", ["total", "zero"], ["cond"], name="positive"),
            helper.make_node(
                "If",
                ["cond"],
                ["y"],
                then_branch=then_graph,
                else_branch=else_graph,
                name="branch",
            ),
        ],
        "if_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [dim_param, OUT_FEATURES])],
        initializer=inits,
    )
    return _model(graph)


def mlp_model(dim_param: str = "batch", opset: int = OPSET) -> onnx.ModelProto:
    """A plain dynamic-batch MLP: Gemm -> Relu -> MatMul -> Add -> Tanh, `x: float32[batch, 8]`."""
    w1, b1, w2, b2 = _weights(
        1, (IN_FEATURES, HIDDEN), (HIDDEN,), (HIDDEN, OUT_FEATURES), (OUT_FEATURES,)
    )
    inits = [
        numpy_helper.from_array(a, name)
        for a, name in ((w1, "W1"), (b1, "b1"), (w2, "W2"), (b2, "b2"))
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1"),
            helper.make_node("Relu", ["h"], ["h_relu"], name="act1"),
            helper.make_node("MatMul", ["h_relu", "W2"], ["o_mm"], name="fc2"),
            helper.make_node("Add", ["o_mm", "b2"], ["o_add"], name="fc2_bias"),
            helper.make_node("Tanh", ["o_add"], ["y"], name="act2"),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [dim_param, OUT_FEATURES])],
        initializer=inits,
    )
    return _model(graph, opset)


def loop_model(
    trip_count: int | None = 3, dim_param: str = "batch", scan_output: bool = False,
    reads_input: bool = False,
) -> onnx.ModelProto:
    """Repeat `h = tanh(h @ W)` on `x: float32[batch, 8]`, a Loop without scan outputs
    (`reads_input`: `h = tanh(h @ W + relu(x))`, the body reading `relu(x)`, computed before
    the loop).

    With an int `trip_count` the count is a constant; with None it is a second graph input
    `n: int64[]` (a scalar the caller passes). `scan_output` adds a scan output (every
    step's `h`, stacked), which IREE's ONNX lowering does not support.
    """
    (w,) = _weights(2, (IN_FEATURES, IN_FEATURES))
    inits = [
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(np.array(True), "keep_going"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim_param, IN_FEATURES])]
    if trip_count is None:
        inputs.append(helper.make_tensor_value_info("n", TensorProto.INT64, []))
        count = "n"
    else:
        inits.append(numpy_helper.from_array(np.array(trip_count, np.int64), "trip_count"))
        count = "trip_count"
    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
        helper.make_node("MatMul", ["h_in", "W"], ["h_mm"], name="body_matmul"),
        *([helper.make_node("Add", ["h_mm", "x_relu"], ["h_sum"], name="body_add")]
          if reads_input else []),
        helper.make_node("Tanh", ["h_sum" if reads_input else "h_mm"], ["h_out"],
                         name="body_tanh"),
    ]
    body_outputs = [
        helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [dim_param, IN_FEATURES]),
    ]
    loop_outputs = ["y"]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [dim_param, IN_FEATURES])]
    if scan_output:
        body_nodes.append(helper.make_node("Identity", ["h_out"], ["h_step"], name="body_scan"))
        body_outputs.append(
            helper.make_tensor_value_info("h_step", TensorProto.FLOAT, [dim_param, IN_FEATURES])
        )
        loop_outputs.append("steps")
        outputs.append(
            helper.make_tensor_value_info(
                "steps", TensorProto.FLOAT, ["trips", dim_param, IN_FEATURES]
            )
        )
    body = helper.make_graph(
        body_nodes,
        "loop_body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [dim_param, IN_FEATURES]),
        ],
        body_outputs,
    )
    graph = helper.make_graph(
        [
            *([helper.make_node("Relu", ["x"], ["x_relu"], name="before")]
              if reads_input else []),
            helper.make_node(
                "Loop", [count, "keep_going", "x"], loop_outputs, body=body, name="repeat"
            ),
        ],
        "loop_model",
        inputs,
        outputs,
        initializer=inits,
    )
    return _model(graph)


def while_model(
    threshold: float = 0.25,
    max_trips: int = 100,
    check_first: bool = True,
    dim_param: str = "batch",
) -> onnx.ModelProto:
    """A data-dependent Loop: `h = 0.5 * tanh(h @ W)` while `max(|h|) > threshold`.

    `max_trips` bounds the trip count; the loop-carried condition decides how many times
    the body runs. With `check_first` the initial condition is `max(|x|) > threshold` (a
    while loop: 0 trips for a small input), otherwise the constant true (a do-while).
    """
    (w,) = _weights(3, (IN_FEATURES, IN_FEATURES))
    inits = [
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(np.array(max_trips, np.int64), "max_trips"),
        numpy_helper.from_array(np.array(threshold, np.float32), "threshold"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array(True), "always"),
    ]
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["h_in", "W"], ["h_mm"], name="body_matmul"),
            helper.make_node("Tanh", ["h_mm"], ["h_tanh"], name="body_tanh"),
            helper.make_node("Mul", ["h_tanh", "half"], ["h_out"], name="body_scale"),
            helper.make_node("Abs", ["h_out"], ["h_abs"], name="body_abs"),
            helper.make_node("ReduceMax", ["h_abs"], ["h_max"], keepdims=0, name="body_max"),
            helper.make_node("Greater", ["h_max", "threshold"], ["cond_out"], name="body_cond"),
        ],
        "while_body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [dim_param, IN_FEATURES]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [dim_param, IN_FEATURES]),
        ],
    )
    nodes = []
    if check_first:
        nodes += [
            helper.make_node("Abs", ["x"], ["x_abs"], name="start_abs"),
            helper.make_node("ReduceMax", ["x_abs"], ["x_max"], keepdims=0, name="start_max"),
            helper.make_node("Greater", ["x_max", "threshold"], ["start"], name="start_cond"),
        ]
    start = "start" if check_first else "always"
    nodes.append(
        helper.make_node("Loop", ["max_trips", start, "x"], ["y"], body=body, name="shrink")
    )
    graph = helper.make_graph(
        nodes,
        "while_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        initializer=inits,
    )
    return _model(graph)


def while_trips(
    x: np.ndarray, threshold: float = 0.25, max_trips: int = 100, check_first: bool = True
) -> int:
    """How many times `while_model`'s body runs on `x` (a numpy re-implementation)."""
    (w,) = _weights(3, (IN_FEATURES, IN_FEATURES))
    h, trips = x, 0
    keep_going = bool(np.abs(h).max() > threshold) if check_first else True
    while keep_going and trips < max_trips:
        h = (0.5 * np.tanh(h @ w)).astype(np.float32)
        trips += 1
        keep_going = bool(np.abs(h).max() > threshold)
    return trips


def legacy_mlp_model(dim_param: str = "batch") -> onnx.ModelProto:
    """`mlp_model` at opset 13 with its weights also listed as graph inputs (old exporters)."""
    model = mlp_model(dim_param, opset=13)
    for init in model.graph.initializer:
        model.graph.input.append(
            helper.make_tensor_value_info(init.name, init.data_type, list(init.dims))
        )
    onnx.checker.check_model(model)
    return model


def custom_op_model(dim_param: str = "batch") -> onnx.ModelProto:
    """Relu followed by an op no ONNX->torch lowering exists for (`com.example.Frobnicate`)."""
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="act"),
            helper.make_node("Frobnicate", ["r"], ["y"], name="frob", domain="com.example"),
        ],
        "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.example", 1)],
    )
    model.ir_version = 8
    return model


def concat_model() -> onnx.ModelProto:
    """`y = Concat(x, x, axis=0)` with an unnamed batch dim; y's rows are an output-only dim."""
    graph = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["y"], axis=0, name="cat")],
        "concat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, IN_FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", IN_FEATURES])],
    )
    return _model(graph)


def if_branches(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`if_model`'s then- and else-branch outputs on `x`, computed with numpy."""
    w1, b1, w2, w3, b3, b4 = _if_weights()
    then_out = np.maximum(x @ w1 + b1, 0) @ w2
    else_out = np.maximum(x @ w3 + b3, 0) + b4
    return then_out.astype(np.float32), else_out.astype(np.float32)


def _value(name: str, elem_type: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


def _scalars(**values) -> list[onnx.TensorProto]:
    return [numpy_helper.from_array(np.array(v), name) for name, v in values.items()]


def if_shapes_model(dim_param: str = "batch") -> onnx.ModelProto:
    """An If whose branches give different shapes: `y = Concat(x, x, axis=1)` (`[batch, 16]`)
    if `ReduceSum(x) > 0`, else `Relu(x @ W)` (`[batch, 4]`); then `r = ReduceSum(y, axis=1)`,
    whose shape is `[batch]` on both paths. The graph declares y's width unknown."""
    (w,) = _weights(5, (IN_FEATURES, OUT_FEATURES))
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array([1]), "axis"),
             *_scalars(zero=np.float32(0))]
    wide = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["wide"], axis=1, name="then_concat")],
        "wide", [], [_value("wide", TensorProto.FLOAT, [dim_param, 2 * IN_FEATURES])])
    narrow = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["e_mm"], name="else_matmul"),
         helper.make_node("Relu", ["e_mm"], ["narrow"], name="else_relu")],
        "narrow", [], [_value("narrow", TensorProto.FLOAT, [dim_param, OUT_FEATURES])])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0, name="total"),
         helper.make_node("Greater", ["total", "zero"], ["cond"], name="positive"),
         helper.make_node("If", ["cond"], ["y"], then_branch=wide, else_branch=narrow,
                          name="pick"),
         helper.make_node("ReduceSum", ["y", "axis"], ["r"], keepdims=0, name="rows")],
        "if_shapes_model",
        [_value("x", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        [_value("y", TensorProto.FLOAT, [dim_param, None]), _value("r", TensorProto.FLOAT,
                                                                     [dim_param])],
        initializer=inits,
    )
    return _model(graph)


def if_in_loop_model(
    threshold: float = 0.25, max_trips: int = 12, dim_param: str = "batch"
) -> onnx.ModelProto:
    """An If inside a data-dependent Loop (a do-while): each step `h = tanh(h @ W)` if
    `ReduceSum(h) > 0`, else `h = 0.5 * h`; the loop goes on while `max(|h|) > threshold`,
    at most `max_trips` times. `if_in_loop_path` says which branches a run takes."""
    (w,) = _weights(6, (IN_FEATURES, IN_FEATURES))
    inits = [numpy_helper.from_array(w, "W"),
             *_scalars(zero=np.float32(0), half=np.float32(0.5),
                       threshold=np.float32(threshold), max_trips=np.int64(max_trips),
                       always=True)]
    grow = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["t_mm"], name="then_matmul"),
         helper.make_node("Tanh", ["t_mm"], ["t_out"], name="then_tanh")],
        "grow", [], [_value("t_out", TensorProto.FLOAT, [dim_param, IN_FEATURES])])
    shrink = helper.make_graph(
        [helper.make_node("Mul", ["h_in", "half"], ["e_out"], name="else_halve")],
        "shrink", [], [_value("e_out", TensorProto.FLOAT, [dim_param, IN_FEATURES])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["h_in"], ["total"], keepdims=0, name="body_total"),
         helper.make_node("Greater", ["total", "zero"], ["positive"], name="body_positive"),
         helper.make_node("If", ["positive"], ["h_out"], then_branch=grow,
                          else_branch=shrink, name="step"),
         helper.make_node("Abs", ["h_out"], ["h_abs"], name="body_abs"),
         helper.make_node("ReduceMax", ["h_abs"], ["h_max"], keepdims=0, name="body_max"),
         helper.make_node("Greater", ["h_max", "threshold"], ["cond_out"], name="body_cond")],
        "if_in_loop_body",
        [_value("i", TensorProto.INT64, []), _value("cond_in", TensorProto.BOOL, []),
         _value("h_in", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        [_value("cond_out", TensorProto.BOOL, []),
         _value("h_out", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["max_trips", "always", "x"], ["y"], body=body,
                          name="iterate")],
        "if_in_loop_model",
        [_value("x", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        [_value("y", TensorProto.FLOAT, [dim_param, IN_FEATURES])],
        initializer=inits,
    )
    return _model(graph)


def if_in_loop_path(x: np.ndarray, threshold: float = 0.25, max_trips: int = 12) -> str:
    """The branches `if_in_loop_model` takes on `x`, one letter per trip: `t`hen or `e`lse
    (a numpy re-implementation)."""
    (w,) = _weights(6, (IN_FEATURES, IN_FEATURES))
    h, path = x, ""
    while len(path) < max_trips:
        positive = bool(h.sum() > 0)
        h = np.tanh(h @ w) if positive else 0.5 * h
        path += "t" if positive else "e"
        if not np.abs(h).max() > threshold:
            break
    return path
