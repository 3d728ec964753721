"""The shape of the code, checked: no module of the three packages over 650 lines, no private name
imported across modules (a module's ``_helper`` is its own), a private module (``_name.py``)
imported only inside its own package, no test importing another test module (shared helpers
live in ``tests.support``), and Phi and log Phi in the accountant and the mechanisms read from one
place, ``accountant.core.normal``. The import layering itself is checked by ``lint-imports``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("accountant", "mechanisms", "verify")
MAX_LINES = 650


def sources(*tops: str) -> Iterator[Path]:
    for top in tops:
        yield from sorted((ROOT / top).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, absolute module, names) of each import in a file."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            yield node.lineno, module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, []


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_over_650_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sources(*PACKAGES)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize("top", [*PACKAGES, "tests", "benchmarks"])
def test_no_private_name_imported_across_modules(top: str) -> None:
    bad = [f"{p.relative_to(ROOT)}:{line} {module}.{name}"
           for p in sources(top) for line, module, names in imports(p) for name in names
           if private(name) and module != "__future__"]
    assert not bad, f"private names imported from another module: {bad}"


@pytest.mark.parametrize("top", [*PACKAGES, "tests", "benchmarks"])
def test_private_modules_stay_in_their_package(top: str) -> None:
    bad = []
    for p in sources(top):
        here = module_name(p)
        for line, module, names in imports(p):
            for full in [module, *(f"{module}.{n}" for n in names)]:
                parts = full.split(".")
                for i, part in enumerate(parts):
                    owner = ".".join(parts[:i])
                    if private(part) and not (here == owner or here.startswith(owner + ".")):
                        bad.append(f"{p.relative_to(ROOT)}:{line} {full}")
    assert not bad, f"private modules imported from outside their package: {bad}"


def test_no_test_imports_another_test_module() -> None:
    bad = [f"{p.relative_to(ROOT)}:{line} {module}"
           for p in sources("tests") for line, module, names in imports(p)
           if any(part.startswith("test_") for part in module.split("."))
           or any(n.startswith("test_") for n in names)]
    assert not bad, f"tests importing test modules: {bad}"


#: scipy.special's normal distribution functions, which ``accountant.core.normal`` replaces
SCIPY_NORMAL = ("ndtr", "log_ndtr")


@pytest.mark.parametrize("top", ["accountant", "mechanisms"])
def test_normal_distribution_read_from_core_normal(top: str) -> None:
    """No ``special.ndtr``/``special.log_ndtr`` (nor ``from scipy.special import ndtr``): their
    errors (up to 2.1 z^2 u, log Phi up to 1369 u) are not the ones the margins are sized for."""
    bad = [f"{p.relative_to(ROOT)}:{node.lineno} {node.attr}"
           for p in sources(top) for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
           if isinstance(node, ast.Attribute) and node.attr in SCIPY_NORMAL
           and isinstance(node.value, ast.Name) and node.value.id == "special"]
    bad += [f"{p.relative_to(ROOT)}:{line} {module}.{name}"
            for p in sources(top) for line, module, names in imports(p) for name in names
            if module == "scipy.special" and name in SCIPY_NORMAL]
    assert not bad, f"scipy's Phi or log Phi instead of accountant.core.normal: {bad}"
