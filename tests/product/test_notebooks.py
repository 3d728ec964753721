"""Every notebook in notebooks/ executes without error (they are committed without outputs).

The executed copies are written to build/notebooks/, where the docs build reads them (see
docs/hooks/notebooks.py): CI executes each notebook once, here, and the site shows these outputs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _hook() -> ModuleType:
    """The docs hook that executes a notebook and writes its executed copy (one place for both)."""
    spec = importlib.util.spec_from_file_location("dpcert_docs_notebooks", ROOT / "docs/hooks/notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_notebook_is_collected() -> None:
    pytest.importorskip("mkdocs")
    assert [p.name for p in _hook().sources()] == [p.name for p in NOTEBOOKS] and len(NOTEBOOKS) == 8


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    pytest.importorskip("mkdocs")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.get("outputs"), f"{path.name} must be committed without outputs"
    hook = _hook()
    executed = hook.execute(path)  # raises CellExecutionError on the first failing cell
    assert hook.is_fresh(path)
    if path.name in {"01_accounting.ipynb", "02_dpsgd_budget.ipynb", "04_audit.ipynb"}:
        figures = [o for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", [])
                   if "image/png" in o.get("data", {})]
        assert figures, f"{path.name}: the executed copy has no figure for the site"


def test_home_page_and_nav_list_every_notebook() -> None:
    home = (ROOT / "docs/index.md").read_text(encoding="utf-8")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        assert f"(notebooks/{path.name})" in home, f"docs/index.md does not link {path.name}"
        assert f": notebooks/{path.name}" in nav, f"mkdocs.yml's nav does not list {path.name}"
