"""A seeded generator of random dynamic PyTorch programs (NNSmith's idea, for dynamic networks).

`generate(seed)` writes the source of one program: a `Model(nn.Module)` whose `forward`
composes constructs of dynamic networks as research code writes them —

    branches on tensor predicates (nested, with early returns), `for` loops left by `break`,
    `while` loops on data, sequences grown in a loop and concatenated, loops whose trip count
    is a number read from a tensor, recursion on data, masked and subscript assignment,
    boolean-mask selection and `topk`/`argmax` routing, tensor literals and factories,
    pooling and strided convolution over a dynamic H x W

— and `example()` (example inputs and their `dynamic_shapes`) and `inputs()` (inputs of several
sizes and scales, so that runs take different paths). Every program is run in eager first: a
seed whose program fails in eager moves on to its next candidate, so each program runs in eager.
The same seed gives the same program, byte for byte (`random.Random` of a string seed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FEATURES = 8
CHANNELS = 4
STATEMENTS = (2, 5)  # per block, inclusive
MAX_DEPTH = 2


@dataclass
class _Writer:
    rng: random.Random
    image: bool
    lines: list[str] = field(default_factory=list)
    layers: list[str] = field(default_factory=list)
    methods: list[list[str]] = field(default_factory=list)
    constructs: set[str] = field(default_factory=set)
    pools: int = 0
    loops: int = 0  # loop variables made, for unique names
    in_loop: int = 0  # loops around the statement being written

    # Thresholds are never values that constructs produce exactly: the sum of `h - h.mean()`
    # is 0 and `tanh(h).max()` saturates at 1 up to rounding, so a predicate against 0 or 1
    # there is decided by summation order — eager's own float64 run may go the other way,
    # and no compiler that reorders a sum can promise eager's side (campaign seeds 91, 146).
    def threshold(self) -> str:
        return f"{self.rng.choice([-0.5, -0.1, 0.05, 0.1, 0.3, 0.6, 0.9]):.2f}"

    def layer(self, kind: str) -> str:
        name = f"{kind}{len(self.layers)}"
        if kind == "lin":
            self.layers.append(f"self.{name} = nn.Linear({FEATURES}, {FEATURES})")
        elif kind == "conv":
            self.layers.append(f"self.{name} = nn.Conv2d({CHANNELS}, {CHANNELS}, 3, padding=1)")
        else:  # a strided convolution: H and W become ceil(H / 2)
            self.layers.append(
                f"self.{name} = nn.Conv2d({CHANNELS}, {CHANNELS}, 3, stride=2, padding=1)")
        return f"self.{name}"

    def predicate(self, var: str = "h") -> str:
        """A condition on the data that inputs of different scales and signs decide both
        ways: a signed reduction against a small threshold, or a magnitude against a
        positive one."""
        if self.rng.random() < 0.5:
            reduce, threshold = self.rng.choice(["mean()", "sum()"]), self.threshold()
        else:
            reduce = self.rng.choice(["abs().mean()", "max()", "std()"])
            threshold = f"{self.rng.choice([0.2, 0.4, 0.7, 0.9]):.2f}"
        return f"{var}.{reduce} {self.rng.choice(['>', '<'])} {threshold}"

    # -- statements: each appends lines at `indent`, keeping `h` of the same kind of shape --

    def block(self, indent: int, depth: int, count: int | None = None) -> None:
        count = count if count is not None else self.rng.randint(*STATEMENTS)
        for _ in range(count):
            self.statement(indent, depth)

    def statement(self, indent: int, depth: int) -> None:
        choices = ["map", "map", "layer", "layer", "literal", "mask", "subscript", "select"]
        if self.image:
            choices += ["pool"] if self.pools < 2 and not self.in_loop else []
        else:
            choices += ["route"]
        if depth < MAX_DEPTH:
            choices += ["if", "if", "for_break", "while", "grow", "int_loop", "recurse"]
        kind = self.rng.choice(choices)
        getattr(self, f"_{kind}")(" " * indent, indent, depth)

    def _map(self, pad: str, indent: int, depth: int) -> None:
        expr = self.rng.choice(["torch.tanh(h)", "torch.relu(h)", "torch.sigmoid(h) - 0.5",
                                "h * 0.5 + 0.1", "h - h.mean()", "torch.sin(h)"])
        self.lines.append(f"{pad}h = {expr}")

    def _layer(self, pad: str, indent: int, depth: int) -> None:
        kind = "conv" if self.image else "lin"
        self.lines.append(f"{pad}h = torch.tanh({self.layer(kind)}(h))")

    def _literal(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("literal")
        if self.image:
            self.lines.append(f"{pad}h = h + torch.tensor([0.25, -0.25, 0.5, 0.0]).view(1, -1, 1, 1)")
        else:
            self.lines.append(f"{pad}h = h + torch.zeros(h.shape[0], 1) + torch.tensor([0.5])")

    def _mask(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("masked assignment")
        self.lines += [f"{pad}h = h.clone()", f"{pad}h[h < {self.threshold()}] = 0.0"]

    def _subscript(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("subscript assignment")
        self.lines += [f"{pad}h = h.clone()", f"{pad}h[:, 0] = h[:, 1] * 2.0"]

    def _select(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("boolean-mask selection")
        rows = "h.flatten(1).mean(dim=1)"
        self.lines += [f"{pad}picked = h[{rows} > {self.threshold()}]",
                       f"{pad}h = h + 0.1 * picked.sum(dim=0, keepdim=True)"]

    def _route(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("routing")
        if self.rng.random() < 0.5:
            self.lines.append(f"{pad}h = h + 0.5 * h[h.sum(dim=1).argmax()]")
        else:
            self.lines += [f"{pad}top = torch.topk(h.sum(dim=0), k=3).indices",
                           f"{pad}h = h + h[:, top].mean(dim=1, keepdim=True)"]

    def _pool(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("pooling over dynamic H x W")
        self.pools += 1
        if self.rng.random() < 0.5:
            self.lines.append(f"{pad}h = F.max_pool2d(h, 2)")
        else:
            self.lines.append(f"{pad}h = torch.relu({self.layer('down')}(h))")

    def _if(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("branch")
        pools = self.pools
        self.lines.append(f"{pad}if {self.predicate()}:")
        if self.rng.random() < 0.25:
            self.constructs.add("early return")
            self.block(indent + 4, depth + 1, 1)
            self.lines.append(f"{pad}    return {self.output()}")
        else:
            self.block(indent + 4, depth + 1)
        then_pools = self.pools
        self.pools = pools
        if self.rng.random() < 0.7:
            self.lines.append(f"{pad}else:")
            self.block(indent + 4, depth + 1)
        self.pools = max(self.pools, then_pools)
        if self.image and self.pools != pools:  # branches give different H x W
            self.constructs.add("branch outputs of different shapes")

    def _for_break(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("for loop with break")
        i = self._loop_var()
        self.lines.append(f"{pad}for {i} in range({self.rng.randint(2, 5)}):")
        self.in_loop += 1
        self.block(indent + 4, depth + 1, self.rng.randint(1, 2))
        self.in_loop -= 1
        self.lines += [f"{pad}    if {self.predicate()}:", f"{pad}        break"]

    def _while(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("while loop on data")
        n = self._loop_var()
        self.lines += [f"{pad}{n} = 0",
                       f"{pad}while h.abs().max() > {abs(float(self.threshold())) + 0.2:.2f} "
                       f"and {n} < {self.rng.randint(2, 6)}:",
                       f"{pad}    h = h * 0.5",
                       f"{pad}    {n} += 1"]

    def _grow(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("sequence grown in a loop")
        i = self._loop_var()
        stop = self.predicate()
        self.lines += [f"{pad}outs = []",
                       f"{pad}for {i} in range({self.rng.randint(2, 5)}):",
                       f"{pad}    h = torch.tanh(h + 0.1)",
                       f"{pad}    outs.append(h.mean(dim=1, keepdim=True))",
                       f"{pad}    if {stop}:",
                       f"{pad}        break",
                       f"{pad}h = h + torch.cat(outs, dim=1).mean(dim=1, keepdim=True)"]

    def _int_loop(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("trip count read from a tensor")
        i = self._loop_var()
        self.lines += [f"{pad}steps = int(h.abs().mean() * 3) % 4",
                       f"{pad}for {i} in range(steps):",
                       f"{pad}    h = torch.tanh(h) * 0.9"]

    def _recurse(self, pad: str, indent: int, depth: int) -> None:
        self.constructs.add("recursion")
        name = f"_refine{len(self.methods)}"
        self.methods.append([
            f"    def {name}(self, h, depth):",
            f"        if depth == 0 or {self.predicate()}:",
            "            return h",
            f"        return self.{name}(torch.tanh(h) * 0.8, depth - 1)",
        ])
        self.lines.append(f"{pad}h = self.{name}(h, {self.rng.randint(1, 4)})")

    def _loop_var(self) -> str:
        self.loops += 1
        return f"i{self.loops}"

    def output(self) -> str:
        if self.image:
            return "h.mean(dim=(2, 3))"
        head = getattr(self, "_head", None)
        if head is None:
            head = self._head = self.layer("lin")
        return f"{head}(h)"


@dataclass(frozen=True)
class Program:
    seed: int
    source: str
    constructs: tuple[str, ...]


def generate(seed: int, candidate: int = 0) -> Program:
    """Candidate `candidate` of the program of `seed` (its text; `benchmarks.fuzz.run`
    takes the first candidate that runs in eager)."""
    rng = random.Random(f"{seed}:{candidate}")
    w = _Writer(rng, image=rng.random() < 0.35)
    w.block(8, 0, rng.randint(3, 7))
    w.lines.append(f"        return {w.output()}")
    init = ["        super().__init__()", *(f"        {layer}" for layer in w.layers)]
    if w.image:
        example = ("(torch.randn(2, 4, 16, 16),), "
                   "({0: Dim('batch', min=1, max=16), 2: Dim('height', min=8, max=64), "
                   "3: Dim('width', min=8, max=64)},)")
        sizes = ("[(b, 4, hw[0], hw[1]) for b in (1, 3) for hw in ((8, 8), (12, 20), (16, 16))]"
                 " + [(16, 4, 64, 64), (5, 4, 63, 33)]")
    else:
        example = "(torch.randn(4, 8),), ({0: Dim('batch', min=1, max=64)},)"
        sizes = "[(b, 8) for b in (1, 2, 5, 9, 63, 64)]"
    source = "\n".join([
        f'"""dync fuzz program, seed {seed}: {", ".join(sorted(w.constructs)) or "straight-line"}."""',
        "import torch",
        "import torch.nn.functional as F",
        "from torch import nn",
        "from torch.export import Dim",
        "",
        "",
        "class Model(nn.Module):",
        "    def __init__(self):",
        *init,
        "",
        "    def forward(self, x):",
        "        h = x",
        *w.lines,
        *(line for method in w.methods for line in ("", *method)),
        "",
        "",
        "def build():",
        f"    torch.manual_seed({seed})",
        "    return Model().eval()",
        "",
        "",
        "def example():",
        f"    torch.manual_seed({seed} + 1)",
        f"    return {example}",
        "",
        "",
        "def inputs():",
        f"    torch.manual_seed({seed} + 2)",
        f"    return [(scale * torch.randn(*size),) for size in {sizes}",
        "            for scale in (0.05, 1.0, -1.5)]",
        "",
    ])
    return Program(seed, source, tuple(sorted(w.constructs)))
