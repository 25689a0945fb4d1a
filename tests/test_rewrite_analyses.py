"""The rewriter's syntactic analyses (liveness after control flow, variables only holding
tensors the function made, `while` loops a counter bounds) and what the rewritten statements do
on real tensors. Pure Python: no export, no IREE."""

from __future__ import annotations

import ast
import textwrap

import pytest
import torch

from dync.frontends.pytorch.rewrite import liveness, values
from dync.frontends.pytorch.rewrite.aliasing import fresh_names, fresh_writes
from dync.frontends.pytorch.rewrite.counted import counted


def _function(source: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(source)).body[0]


def _nodes(func: ast.FunctionDef, kind: type) -> list[ast.AST]:
    found = [n for n in ast.walk(func) if isinstance(n, kind)]
    return sorted(found, key=lambda n: n.lineno)


def test_a_temporary_of_a_branch_is_dead_after_it():
    func = _function("""
    def forward(self, h):
        if h.max() > 1:
            picked = h[h > 0]
            h = h + picked.sum()
        else:
            h = h * 2
        return h
    """)
    (branch,) = _nodes(func, ast.If)
    assert liveness.analyze(func).after[id(branch)] == {"h"}


def test_a_name_read_later_or_by_a_closure_stays_live():
    func = _function("""
    def forward(self, x):
        t = x
        scale = lambda v: v * t
        if x.mean() > 0:
            t = x * 2
            y = x + 1
        else:
            y = x - 1
        return scale(y)
    """)
    (branch,) = _nodes(func, ast.If)
    assert liveness.analyze(func).after[id(branch)] >= {"t", "y"}


def test_a_loop_carries_what_its_next_iteration_reads_and_not_its_temporaries():
    func = _function("""
    def forward(self, h):
        n = 0
        while h.abs().mean() > 0.5:
            t = torch.cat([h, h], dim=1)
            h = t[:, :4] * 0.5
            n = n + 1
        return h
    """)
    (loop,) = _nodes(func, ast.While)
    head = liveness.analyze(func).head[id(loop)]
    assert "h" in head and "t" not in head
    assert "n" in head  # read by the next iteration's `n + 1`, though never after the loop


def test_a_branch_inside_a_loop_keeps_what_the_next_iteration_reads():
    func = _function("""
    def forward(self, h):
        for i in range(h.shape[0]):
            if h[i].sum() > 0:
                acc = h[i]
            h = h + acc
        return h
    """)
    (branch,) = _nodes(func, ast.If)
    assert "acc" in liveness.analyze(func).after[id(branch)]


def test_unseen_reads_turn_the_analysis_off():
    for body in ("return locals()", "global g\n    return g", "return eval('x')"):
        func = _function(f"def forward(self, x):\n    if x.mean() > 0:\n        y = x\n    {body}")
        assert liveness.analyze(func) is None


def test_fresh_names_are_the_ones_the_function_made():
    func = _function("""
    def forward(self, x, cache):
        a = x.clone()
        b = torch.zeros(x.shape[0], 4)
        c = x * 2
        d = x              # another name for x
        e = x[:, :2]       # a view
        f = self.drop(x)   # nn.Dropout in eval returns x itself
        g = x.clone()
        g = x.view(-1)     # one binding is a view: not fresh
        for h in [a, b]:   # h is a, then b
            pass
        k, m = x.clone(), x.clone()
        return a, b, c, d, e, f, g, h, k, m, cache
    """)
    assert fresh_names(func) == {"c"}


def test_a_tensor_another_name_can_reach_is_not_fresh():
    func = _function("""
    def forward(self, x):
        a = x.clone()
        b = x.clone()
        c = x.clone()
        d = x.clone()
        e = x.clone()
        f = x.clone()
        g = x.clone()
        keep = b                  # b's tensor under another name
        row = c[0]                # a view of c
        same = self.drop(d)       # may be d itself
        out = []
        out.append(e)             # into a container
        for r in f:               # rows of f
            pass
        g = g.float()             # may be g itself: not a new tensor (conservative)
        total = a.sum() + torch.cat([a, g]).mean() + len(a) + a.shape[0]
        a[0] = 1.0
        return a, keep, row, same, out, g
    """)
    assert fresh_names(func) == {"a", "total"}


def test_the_model_inputs_are_private_to_its_own_forward():
    func = _function("""
    def forward(self, x, y, z):
        h = x           # the only read of x
        k = y           # y is read again below
        if h.sum() > 0:
            h[0] = 1.0
        return h, k, y, z
    """)
    assert fresh_names(func) == set()
    assert fresh_names(func, inputs_are_private=True) == {"h", "z"}


def test_a_write_right_after_a_fresh_binding_is_on_a_new_tensor():
    func = _function("""
    def forward(self, x):
        h = x
        if x.sum() > 0:
            h = h.clone()
            h[0] = 1.0            # fresh: the clone came last
            h = self.helper(h)
            h[1] = 2.0            # not: the helper's result may be shared
            h = h * 2
            keep = h
            h[2] = 3.0            # not: keep holds it
            h = h + 1
            if x.mean() > 0:
                h = x
            h[3] = 4.0            # not: a binding between
        return h, keep
    """)
    writes = {stmt.lineno for stmt in ast.walk(func) if id(stmt) in fresh_writes(func)}
    assert writes == {6}


def test_setitem_and_getitem_are_the_statements_on_real_tensors():
    x = torch.arange(12.0).reshape(3, 4)
    alias = x
    out = values.setitem(x, (slice(None), 0), 5.0)
    assert out is x and alias[1, 0] == 5.0  # in place, as `x[:, 0] = 5.0` is
    values.setitem(x, torch.tensor(1), torch.ones(4), op="iadd")
    assert torch.equal(x[1], torch.tensor([5.0 + 1, 5.0 + 1, 6.0 + 1, 7.0 + 1]))
    assert torch.equal(values.getitem(x, torch.tensor(-1)), x[-1])
    assert torch.equal(values.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 2], [3, 4]]))
    assert values.data_of(x) is not None and torch.equal(values.data_of(x), x)


@pytest.mark.parametrize("source, bounded", [
    ("while i < n:\n    y = f(y)\n    i += 1", True),
    ("while i < n and not done:\n    i = i + 2", True),
    ("while n > i:\n    i = 1 + i", True),
    ("while i <= x.size(0) - 1:\n    i += 1", True),
    ("while i < self.max_len:\n    if c:\n        break\n    i += 1", True),
    ("while i < n:\n    if c:\n        i += 1", False),  # not on every trip
    ("while i < n:\n    i += 1\n    i += 1", False),  # two steps: not taken apart
    ("while i < n:\n    n = n + 1\n    i += 1", False),  # the limit moves
    ("while i < self.m:\n    self.m = 3\n    i += 1", False),
    ("while i < f(n):\n    i += 1", False),  # a call may do anything when evaluated again
    ("while i < n:\n    if c:\n        continue\n    i += 1", False),
    ("while i < n:\n    i += 0", False),
    ("while i < n:\n    i -= 1", False),
    ("while i < n:\n    i += 1.0", False),
    ("while i < n:\n    def g():\n        nonlocal i\n        i = 0\n    i += 1", False),
    ("while i < n or c:\n    i += 1", False),
])
def test_a_while_is_bounded_by_a_counter_stepped_on_every_trip(source, bounded):
    loop = ast.parse(source).body[0]
    assert (counted(loop) is not None) is bounded
