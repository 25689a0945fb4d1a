"""ONNX values known at compile time computed there: small constant subgraphs folded, and `If`
nodes whose condition is known replaced by the branch they take.

ONNX functions expanded into a graph (AffineGrid, the `_expanded` node tests, exporters'
rank-generic code) compute with shapes: `If(Size(size) == 4)` picks the 2-D or the 3-D case
(two branches of different ranks, which IREE's importer cannot give one type), a Squeeze's
input shape comes out of an index tensor built from a shape. When those shapes are static the
values are constants. Each node whose inputs are all known — constants, or the `Shape`/`Size`
of a value of static shape — is computed here by ONNX's reference evaluator and becomes a
`Constant`, when its outputs are small; an If whose condition is known becomes the nodes of
its branch. Anything that depends on an input's values or on a dynamic dim is left as it is.
The nodes of subgraphs (If branches, Loop and Scan bodies) are folded the same way, except
that there a `Shape` is known only for a value of the main graph, and a `Size` of a shape
(a rank) always: a Loop body's values may change shape from one iteration to the next.
Nothing is executed but the ONNX ops of the model, by ONNX's own evaluator.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from .onnx_graphs import (
    constant_value,
    constant_values,
    fresh_name,
    named_shape,
    names_in,
    outer_reads,
    renamed,
    subgraphs,
    value_types,
)

# Values folded at compile time have at most this many elements (shape arithmetic needs few;
# a big constant would only move work from run time into the module's size).
_MAX_ELEMENTS = 1 << 16


# Ops whose outputs are draws of a random generator: never computed at compile time.
_RANDOM = frozenset({"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike",
                     "RandomUniform", "RandomUniformLike"})
# Ops whose output size follows from their input values: computed only when shape inference
# gave the output a static shape that is small.
_SIZED_BY_VALUES = frozenset({"ConstantOfShape", "Expand", "EyeLike", "OneHot", "Pad", "Range",
                              "Resize", "Tile", "Upsample"})


class _Folder:
    """What is known at compile time about the values of one graph, and the nodes kept."""

    def __init__(self, model: onnx.ModelProto):
        graph = model.graph
        self.opsets = list(model.opset_import)
        self.known = constant_values(graph, _MAX_ELEMENTS)
        self.types = value_types(graph)
        self.main_values = set(self.types)
        self.nested = False  # folding a subgraph's nodes
        self.ranks: dict[str, int] = {}  # a Shape's output -> its length (the input's rank)
        self.taken = names_in(graph)
        self.folded: list[str] = []  # op types of the nodes computed
        self.inlined: list[str] = []  # the Ifs replaced by a branch
        self.with_subgraphs_changed: list[str] = []  # given outer constants or folded inside

    def static_shape(self, name: str) -> list[int] | None:
        dims = named_shape(self.types.get(name))
        return None if dims is None or not all(isinstance(d, int) for d in dims) else dims

    def lasting_shape(self, name: str) -> list[int] | None:
        """The static shape of `name` where it holds on every run of the graph that defines it:
        any value's of the main graph; in a subgraph (a Loop body's values may change shape
        from one iteration to the next) a main-graph value's, or a `Shape` output's."""
        if not self.nested or name in self.main_values:
            return self.static_shape(name)
        return [self.ranks[name]] if name in self.ranks else None

    def evaluate(self, node: onnx.NodeProto) -> list[np.ndarray] | None:
        """The outputs of `node` when its inputs are known and its outputs small, else None."""
        if node.op_type in ("Shape", "Size") and node.input[0] not in self.known:
            shape = self.lasting_shape(node.input[0])
            if shape is None and node.op_type == "Shape":
                self._note_rank(node)
            return None if shape is None else [_shape_value(node, shape)]
        if (subgraphs(node) or node.op_type in _RANDOM or node.op_type == "Constant"
                or node.domain not in ("", "ai.onnx") or self.may_be_big(node)
                or not all(i in self.known for i in node.input if i)):
            return None
        inputs = [i for i in node.input if i]
        model = helper.make_model(
            helper.make_graph([node], "fold", [], [helper.make_empty_tensor_value_info(o)
                                                   for o in node.output if o],
                              [numpy_helper.from_array(np.asarray(self.known[i]), i)
                               for i in dict.fromkeys(inputs)]),
            opset_imports=self.opsets)
        try:
            values = ReferenceEvaluator(model).run(None, {})
        except Exception:  # an op the reference evaluator lacks, or invalid data: run it later
            return None
        if not all(isinstance(v, np.ndarray) and v.size <= _MAX_ELEMENTS for v in values):
            return None  # a sequence, an optional or a big tensor
        return values

    def may_be_big(self, node: onnx.NodeProto) -> bool:
        """Whether an output of `node` has more than `_MAX_ELEMENTS`, or may have and is of
        an op whose output size its input values set (not computed to find out)."""
        for name in node.output:
            shape = self.static_shape(name) if name else None
            if shape is not None and np.prod(shape) > _MAX_ELEMENTS:
                return True
            if shape is None and node.op_type in _SIZED_BY_VALUES:
                return True
        return False

    def _note_rank(self, node: onnx.NodeProto) -> None:
        t = self.types.get(node.input[0])
        if t is not None and t.tensor_type.HasField("shape"):
            rank = len(t.tensor_type.shape.dim)
            self.ranks[node.output[0]] = len(_shape_value(node, [0] * rank))

    def fold_subgraphs(self, node: onnx.NodeProto) -> bool:
        """Fold the nodes of `node`'s subgraphs; returns whether any was."""
        changed = False
        for sub in subgraphs(node):
            saved = self.types, self.nested, len(self.folded), len(self.inlined)
            self.types, self.nested = {**self.types, **value_types(sub)}, True
            nodes = self.fold(list(sub.node))
            if (len(self.folded), len(self.inlined)) != saved[2:]:
                del sub.node[:]
                sub.node.extend(nodes)
                del sub.value_info[:]  # inference types the subgraph again
                changed = True
            self.types, self.nested = saved[0], saved[1]
        return changed

    def condition(self, node: onnx.NodeProto) -> onnx.GraphProto | None:
        """The branch an If takes, when its condition is known."""
        value = self.known.get(node.input[0])
        if value is None or np.asarray(value).size != 1:
            return None
        branch = "then_branch" if bool(np.asarray(value).reshape(-1)[0]) else "else_branch"
        return next(a.g for a in node.attribute if a.name == branch)

    def localize(self, node: onnx.NodeProto) -> bool:
        """Copy the known outer values `node`'s subgraphs read into them as Constants (fresh
        names): shape inference of a subgraph sees no outer value, so an Unsqueeze by an
        outer axes constant leaves everything after it unshaped. Returns whether it did."""
        copied = False
        for sub in subgraphs(node):
            outer = sorted(n for n in outer_reads(sub) if n in self.known)
            if not outer:
                continue
            names = {name: fresh_name(self.taken, name) for name in outer}
            renamed(sub, names)
            constants = [helper.make_node("Constant", [], [names[n]], value=numpy_helper.from_array(
                np.asarray(self.known[n]), names[n])) for n in outer]
            body = list(sub.node)
            del sub.node[:]
            sub.node.extend(constants + body)
            del sub.value_info[:]  # typed without the constants: inference types them again
            copied = True
        return copied

    def fold(self, nodes: list[onnx.NodeProto]) -> list[onnx.NodeProto]:
        kept: list[onnx.NodeProto] = []
        pending = list(reversed(nodes))
        while pending:
            node = pending.pop()
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                value = constant_value(node)
                if value is not None and value.size <= _MAX_ELEMENTS:
                    self.known[node.output[0]] = value
                kept.append(node)
                continue
            branch = self.condition(node) if node.op_type == "If" else None
            if branch is not None:
                self.inlined.append(node.name or node.output[0])
                pending.extend(reversed(_inline(node, branch, self.taken)))
                continue
            values = self.evaluate(node)
            if values is None:
                if self.localize(node) | self.fold_subgraphs(node):
                    self.with_subgraphs_changed.append(node.name or node.output[0])
                kept.append(node)
                continue
            try:
                constants = [helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
                    value, name)) for name, value in zip(node.output, values, strict=False) if name]
            except Exception:  # a value numpy_helper cannot write back (an exotic dtype)
                kept.append(node)
                continue
            self.folded.append(node.op_type)
            self.known.update((n, v) for n, v in zip(node.output, values, strict=False) if n)
            kept.extend(constants)
        return kept


def _shape_value(node: onnx.NodeProto, shape: list[int]) -> np.ndarray:
    if node.op_type == "Size":
        return np.array(int(np.prod(shape)), np.int64)
    attributes = {a.name: a.i for a in node.attribute}
    return np.array(shape[attributes.get("start", 0):attributes.get("end", len(shape))],
                    np.int64)


def _inline(node: onnx.NodeProto, branch: onnx.GraphProto, taken: set[str]
            ) -> list[onnx.NodeProto]:
    """The nodes of `branch` with the names it defines made fresh, and an Identity from each
    of its outputs to the If's."""
    body = onnx.GraphProto()
    body.CopyFrom(branch)
    defined = {o for n in body.node for o in n.output if o} | {t.name for t in body.initializer}
    names = {name: fresh_name(taken, name) for name in sorted(defined)}
    renamed(body, names)
    nodes = [helper.make_node("Constant", [], [names[t.name]], value=t)
             for t in body.initializer]
    nodes.extend(body.node)
    nodes.extend(helper.make_node("Identity", [value.name], [output])
                 for value, output in zip(body.output, node.output, strict=True) if output)
    return nodes


def fold_constants(model: onnx.ModelProto) -> tuple[list[str], list[str], list[str]]:
    """Compute, in place, the nodes of the main graph and its subgraphs whose values are known
    at compile time, inline the Ifs whose condition is, and copy into subgraphs the known
    values they read; returns the op types folded, the Ifs inlined and the nodes whose
    subgraphs got copies or were folded."""
    graph = model.graph
    folder = _Folder(model)
    nodes = folder.fold(list(graph.node))
    if folder.folded or folder.inlined or folder.with_subgraphs_changed:
        del graph.node[:]
        graph.node.extend(nodes)
        # The inlined Ifs' outputs were typed for both branches: inference types them again.
        retyped = {o for n in nodes if n.op_type == "Identity" for o in n.output}
        kept = [v for v in graph.value_info if v.name not in retyped]
        del graph.value_info[:]
        graph.value_info.extend(kept)
    return folder.folded, folder.inlined, folder.with_subgraphs_changed
