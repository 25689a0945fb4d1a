"""The catalogue of dync IR attributes (`dync.dialects.attributes`) is the one place they are
declared, and it agrees with the code: each writer and reader exists, and each pass it names
says so in its docstring's Reads/Writes."""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dync.dialects.attributes import CATALOGUE
from dync.passes.pipeline import _PASS_MODULES

PACKAGE = Path(__file__).resolve().parents[1] / "dync"
CATALOGUE_FILE = PACKAGE / "dialects" / "attributes.py"
COMPONENTS = {"frontends", "dync.compile", "backend"}
_NAME = re.compile(r"^dync\.[a-z_]+$")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _attribute_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and _NAME.match(node.value) and id(node) not in docs]


def test_every_attribute_name_is_spelled_only_in_the_catalogue():
    elsewhere = [f"{path.relative_to(PACKAGE.parent)}:{line}: {name!r}"
                 for path in sorted(PACKAGE.rglob("*.py")) if path != CATALOGUE_FILE
                 for line, name in _attribute_literals(path)]
    assert not elsewhere, "declare these in dync/dialects/attributes.py:\n" + "\n".join(elsewhere)


def test_the_catalogue_covers_every_attribute_the_lit_tests_show():
    lit = Path(__file__).resolve().parents[1] / "lit"
    shown = {m for path in lit.rglob("*.mlir")
             for m in re.findall(r"\b(dync\.[a-z_]+)\s*(?:=|\}|,|\])",
                                 path.read_text(encoding="utf-8"))}
    shown -= {name for name in shown if name.startswith("dync.dialects")}
    assert shown <= set(CATALOGUE), sorted(shown - set(CATALOGUE))


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_each_writer_and_reader_exists_and_passes_say_so(name):
    attribute = CATALOGUE[name]
    assert attribute.written_by, f"{name} has no writer"
    silent = []
    for who in attribute.written_by + attribute.read_by:
        if who in COMPONENTS:
            continue
        if who.startswith("analysis."):
            importlib.import_module(f"dync.{who}")
            continue
        assert who in _PASS_MODULES, f"{name}: {who!r} is neither a pass nor a component"
        module = importlib.import_module(_PASS_MODULES[who])
        if name not in (module.__doc__ or ""):
            silent.append(who)
    assert not silent, f"these passes' docstrings (Reads/Writes) do not name {name}: {silent}"


def test_dync_opt_lists_the_catalogue():
    done = subprocess.run([sys.executable, "-m", "dync.opt", "--list-attributes"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| `dync.")]
    assert [row.split("`")[1] for row in rows] == list(CATALOGUE)
    assert all(row.count(" | ") == 5 for row in rows), rows   # pipes in cells are escaped
