"""No private name crosses a module boundary: a module's ``_helper`` (and a ``_module``) is its own.

Every ``import`` and ``from ... import`` in the checked packages is read with ``ast``; an import of a
name or a module starting with one underscore (dunders aside) is reported with its file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The packages held to the rule.
PACKAGES = ("mechanisms", "verify")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: statement`` for each import of a private name or module in ``path`` (the file
    named relative to ``root``)."""
    where = path.relative_to(root)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            names = [a.name for a in node.names]
            if node.module != "__future__" and (any(map(_private, parts)) or any(map(_private, names))):
                found.append(f"{where}:{node.lineno}: from {'.' * node.level}"
                             f"{node.module or ''} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            found += [f"{where}:{node.lineno}: import {a.name}" for a in node.names
                      if any(map(_private, a.name.split(".")))]
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_private_name_imported_across_modules(package: str) -> None:
    found = [line for path in sorted((ROOT / package).rglob("*.py")) for line in private_imports(path)]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from __future__ import annotations\nfrom .audit.core import _short_repr\n"
                     "import verify._x\nfrom .audit import __all__\n", encoding="utf-8")
    assert len(private_imports(probe, tmp_path)) == 2
