"""How a model's flat outputs nest (tuples, lists, dicts), read from the JSON that
`torch.utils._pytree.treespec_dumps` writes into a manifest, without torch.

A deployed module runs where torch may be absent, and a manifest may come from someone else:
the spec is parsed as data here. Tuples, lists, dicts and OrderedDicts (what models return)
are rebuilt without torch (and a `None` or constant the model returns, which the compiled
function does not, and a number it returns, a 0-d output made a Python int, float or bool
again, and a tensor returned from one path and None from the other), and torch's named tuples of results (`torch.return_types.sort`,
`max(dim)`'s) as such where torch is loaded, as tuples where it is not. The model's own
namedtuples (`Out = namedtuple("Out", ["logits", "hidden"])`) are written by module, name
and fields (`namedtuple_node`) and rebuilt as their class where this process defined it
(`namedtuple_node` remembers it, or an imported module's attribute: nothing is imported), else as a
tuple class of the same name and fields, made here without evaluating anything. Any other
node type (a registered dataclass) is handed to torch's own `treespec_loads`, which needs
torch at call time.
"""

from __future__ import annotations

import collections
import json
import keyword
import operator
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import DyncError, ModuleFormatError

_CONTAINERS = {"builtins.tuple": tuple, "builtins.list": list, "builtins.dict": dict,
               "collections.OrderedDict": collections.OrderedDict}
_DICTS = ("builtins.dict", "collections.OrderedDict")
_RESULTS = re.compile(r"torch\.return_types\.[A-Za-z_][A-Za-z0-9_]*")
_MAX_DEPTH = 64
_NAMEDTUPLE = "namedtuple"
#: A `None` the model returns: no output of the compiled function, rebuilt as None.
NONE_NODE = "builtins.NoneType"
#: A number the model returns (a size, `n / 2`, an `.item()`): a 0-d output of the compiled
#: function, rebuilt as the Python type its context names.
SCALAR_NODE = "dync.output_tree.scalar"
#: A constant the model returns (`return y, 3`): no output of the compiled function; its
#: context is the value's JSON.
CONSTANT_NODE = "dync.output_tree.constant"
#: A tensor the model returns from one path of a data-dependent branch and None from the
#: other: two outputs of the compiled function, the tensor and a 0-d bool saying whether it
#: is there, rebuilt as the tensor or None.
OPTIONAL_NODE = "dync.output_tree.optional"
_SCALARS = {"int": int, "float": float, "bool": bool}
#: The types of a constant leaf's value.
CONSTANT_TYPES = (bool, int, float, str)
#: The namedtuple classes of outputs this process compiled: (module, qualname, fields) -> class.
_KNOWN: dict[tuple[str, str, tuple[str, ...]], type] = {}


@dataclass(frozen=True)
class Node:
    """A container (`kind` one of `_CONTAINERS`' keys, `keys` for dicts) or a leaf (`kind`
    None, or a scalar, a constant, a None: `keys` its type or value); `leaves` counts the
    outputs of the compiled function below."""

    kind: str | None
    keys: tuple = ()
    children: tuple[Node, ...] = ()

    @property
    def leaves(self) -> int:
        return 1 if self.kind in (None, SCALAR_NODE) else sum(c.leaves for c in self.children)


class OutputTree:
    """`nest(flat)`: the flat outputs of a call nested as the spec `text` says."""

    def __init__(self, text: str, where: str = "the manifest"):
        self.text = text
        self.foreign = ""
        try:
            data = json.loads(text)
        except (TypeError, ValueError, RecursionError) as e:  # (nested past Python's stack)
            raise ModuleFormatError(f"{where}: the output tree is not JSON ({e})") from None
        if not (isinstance(data, list) and len(data) == 2 and isinstance(data[1], dict)):
            raise ModuleFormatError(f"{where}: the output tree is not a pytree spec")
        try:
            self.root = _node(data[1], 0)
        except _Foreign as e:
            self.root = None
            self.foreign = str(e)
        except (KeyError, TypeError, ValueError) as e:
            raise ModuleFormatError(f"{where}: malformed output tree ({e})") from None
        self.flat_tuple = (self.root is not None and self.root.kind == "builtins.tuple"
                           and all(c.kind is None for c in self.root.children))

    @property
    def nester(self) -> Callable[[list], Any]:
        """`nest`, or for a lone leaf the cheaper call that does the same."""
        if self.root is not None and self.root.kind is None:
            return operator.itemgetter(0)
        return self.nest

    def nest(self, flat: list) -> Any:
        if self.flat_tuple and len(flat) == len(self.root.children):
            return tuple(flat)
        if self.root is None:
            return self._nest_with_torch(flat)
        if self.root.leaves != len(flat):
            raise DyncError(f"the module returned {len(flat)} outputs; its output tree "
                            f"holds {self.root.leaves}")
        leaves = iter(flat)
        return _build(self.root, leaves)

    def _nest_with_torch(self, flat: list) -> Any:
        try:
            from torch.utils import _pytree as pytree
        except ImportError:
            raise DyncError(f"the model's outputs nest in a {self.foreign}, which only torch "
                            "can rebuild: install torch, or return tuples, lists or dicts"
                            ) from None
        values: list = []
        try:
            spec = _torch_spec(json.loads(self.text)[1], iter(flat), values)
        except StopIteration:
            raise DyncError(f"the module returned {len(flat)} outputs, fewer than its output "
                            "tree holds") from None
        except (KeyError, TypeError, ValueError) as e:
            raise ModuleFormatError(f"malformed output tree ({e})") from None
        return pytree.tree_unflatten(values, pytree.treespec_loads(json.dumps([1, spec])))


class _Foreign(Exception):
    pass


_LEAF = {"type": None, "context": None, "children_spec": []}


def _torch_spec(data: dict, flat, values: list, depth: int = 0) -> dict:
    """`data` (a node of a tree torch rebuilds) with dync's leaves (scalars, constants, Nones)
    as torch's plain ones, their values appended to `values` in leaf order."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"nested more than {_MAX_DEPTH} deep")
    kind = data["type"]
    if kind is None or kind in (NONE_NODE, SCALAR_NODE, CONSTANT_NODE, OPTIONAL_NODE):
        values.append(_build(_node(data, depth), flat))
        return _LEAF
    if not isinstance(data["children_spec"], list):
        raise TypeError("children_spec is not a list")
    return {**data, "children_spec": [_torch_spec(c, flat, values, depth + 1)
                                      for c in data["children_spec"]]}


def _node(data: dict, depth: int) -> Node:
    if depth > _MAX_DEPTH:
        raise ValueError(f"nested more than {_MAX_DEPTH} deep")
    kind, context, children = data["type"], data["context"], data["children_spec"]
    if kind is None:
        if children:
            raise ValueError("a leaf has children")
        return Node(None)
    if kind in (NONE_NODE, SCALAR_NODE, CONSTANT_NODE) and children:
        raise ValueError(f"a {kind.rsplit('.', 1)[1]} leaf has children")
    if kind == NONE_NODE:
        return Node(NONE_NODE)
    if kind == SCALAR_NODE:
        if context not in _SCALARS:
            raise ValueError(f"a scalar of type {context!r}")
        return Node(SCALAR_NODE, (context,))
    if kind == CONSTANT_NODE:
        value = json.loads(context)
        if not isinstance(value, CONSTANT_TYPES):
            raise ValueError(f"a constant of type {type(value).__name__}")
        return Node(CONSTANT_NODE, (value,))
    if kind not in _CONTAINERS and kind not in (_NAMEDTUPLE, OPTIONAL_NODE) \
            and not _RESULTS.fullmatch(str(kind)):
        raise _Foreign(str(kind))
    if not isinstance(children, list):
        raise TypeError("children_spec is not a list")
    nodes = tuple(_node(c, depth + 1) for c in children)
    if kind == OPTIONAL_NODE and [n.kind for n in nodes] != [None, None]:
        raise ValueError("an optional node's children are not a value and its presence")
    keys: tuple = ()
    if kind in _DICTS:
        keys = tuple(json.loads(context))
        if len(keys) != len(nodes) or not all(isinstance(k, str | int) for k in keys):
            raise ValueError("a dict's keys do not match its children")
    if kind == _NAMEDTUPLE:
        module, name, fields = (json.loads(context)[k] for k in ("module", "name", "fields"))
        if not (isinstance(module, str) and isinstance(name, str) and isinstance(fields, list)
                and len(fields) == len(nodes) and all(map(_identifier, fields))):
            raise ValueError("a namedtuple's fields do not match its children")
        keys = (module, name, tuple(fields))
    return Node(kind, keys, nodes)


def _identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def namedtuple_node(cls: type) -> tuple[str, str]:
    """The (type, context) of a model's namedtuple class `cls` in an output tree's JSON;
    `cls` is remembered for this process's calls."""
    key = (cls.__module__, cls.__qualname__, tuple(cls._fields))
    _KNOWN[key] = cls
    return _NAMEDTUPLE, json.dumps({"module": key[0], "name": key[1], "fields": list(key[2])})


def _namedtuple_class(module: str, name: str, fields: tuple[str, ...]) -> type:
    cls = _KNOWN.get((module, name, fields))
    if cls is None:
        cls = sys.modules.get(module)
        for part in name.split("."):
            cls = getattr(cls, part, None)
        if not (isinstance(cls, type) and issubclass(cls, tuple)
                and tuple(getattr(cls, "_fields", ())) == fields):
            cls = _tuple_class(name.rsplit(".", 1)[-1], fields)
        _KNOWN[module, name, fields] = cls
    return cls


def _tuple_class(name: str, fields: tuple[str, ...]) -> type:
    """A tuple class with `fields` as attributes, as a namedtuple of them behaves for its
    results: made from the manifest's names without evaluating them (`collections.namedtuple`
    would)."""
    def new(cls, *values):
        return tuple.__new__(cls, values)

    def as_dict(self):
        return dict(zip(fields, self, strict=True))

    def represent(self):
        return f"{type(self).__name__}({', '.join(f'{f}={v!r}' for f, v in as_dict(self).items())})"

    body = {f: property(operator.itemgetter(i)) for i, f in enumerate(fields)}
    body.update(__slots__=(), _fields=fields, __new__=new, __repr__=represent,
                _asdict=as_dict)
    return type(name if _identifier(name) else "Outputs", (tuple,), body)


def _build(node: Node, leaves) -> Any:
    if node.kind is None:
        return next(leaves)
    if node.kind == NONE_NODE:
        return None
    if node.kind == SCALAR_NODE:
        return _SCALARS[node.keys[0]](next(leaves).item())
    if node.kind == CONSTANT_NODE:
        return node.keys[0]
    values = [_build(c, leaves) for c in node.children]
    if node.kind == OPTIONAL_NODE:
        value, present = values
        return value if bool(present) else None
    if node.kind == _NAMEDTUPLE:
        return _namedtuple_class(*node.keys)(*values)
    if node.kind not in _CONTAINERS:  # torch.return_types.<name>
        torch = sys.modules.get("torch")
        named = getattr(torch.return_types, node.kind.rsplit(".", 1)[1], None) if torch else None
        return named(values) if named is not None else tuple(values)
    container = _CONTAINERS[node.kind]
    if node.kind in _DICTS:
        return container(zip(node.keys, values, strict=True))
    return container(values)


def leaves(value: Any) -> list:
    """The leaves of nested tuples, lists and dicts (dict values in insertion order), as
    torch's `tree_leaves` gives them (torch's own when torch is loaded: it knows more node
    types, and the nesting a model's inputs use), less None: no input, as torch.export takes
    a None argument (and an absent ONNX optional)."""
    torch = sys.modules.get("torch")
    if type(value) is tuple and all(_is_array(v, torch) for v in value):
        return list(value)  # the common call, flat tensors: pytree's walk cost 10 us of it
    if torch is not None:
        from torch.utils import _pytree as pytree

        return [leaf for leaf in pytree.tree_leaves(value) if leaf is not None]
    if value is None:
        return []
    if isinstance(value, tuple | list):
        return [leaf for v in value for leaf in leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    return [value]


def _is_array(value: Any, torch) -> bool:
    return isinstance(value, np.ndarray) or (torch is not None and isinstance(value, torch.Tensor))
