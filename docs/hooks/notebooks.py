"""MkDocs hook: the site's notebook pages are the notebooks as the test suite executed them.

``notebooks/*.ipynb`` are committed without outputs. ``tests/product/test_notebooks.py`` executes each
one (nbclient) and writes the executed copy to ``build/notebooks/`` with a key of what it ran: the
notebook and the three packages' sources. The docs build (mkdocs-jupyter, ``execute: false``) renders
those copies, outputs and figures included; so CI, which runs pytest before the docs build, executes
each notebook once. A copy that is missing or whose key no longer matches (a local ``mkdocs build``
without the tests, or after an edit) is executed here first, so the site never shows stale outputs.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "notebooks"
EXECUTED = ROOT / "build" / "notebooks"
PACKAGES = ("accountant", "mechanisms", "verify")
SITE_DIR = "notebooks"  # the pages' folder in the site: notebooks/01_accounting/

log = logging.getLogger("mkdocs.hooks.notebooks")


def sources() -> list[Path]:
    """The committed notebooks, in order."""
    return sorted(SOURCE.glob("*.ipynb"))


def run_key(path: Path) -> str:
    """sha256 of the notebook and of every source file of the packages it imports."""
    digest = hashlib.sha256(path.read_bytes())
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            digest.update(str(file.relative_to(ROOT)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def executed_path(path: Path) -> Path:
    return EXECUTED / path.name


def is_fresh(path: Path, key: str | None = None) -> bool:
    """Whether the executed copy of ``path`` exists and ran this notebook on these sources."""
    import nbformat

    target = executed_path(path)
    if not target.exists():
        return False
    nb = nbformat.read(target, as_version=4)
    return bool(nb.metadata.get("dpcert", {}).get("run_key") == (key or run_key(path)))


def execute(path: Path, timeout: int = 300) -> Any:
    """Execute ``path`` in a fresh kernel that imports this checkout; write and return the executed copy."""
    import nbclient
    import nbformat

    key = run_key(path)
    nb = nbformat.read(path, as_version=4)
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), previous]))
    try:
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous
    nb.metadata["dpcert"] = {"run_key": key}
    EXECUTED.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, executed_path(path))
    return nb


def on_pre_build(config: Any, **kwargs: Any) -> None:
    stale = [path for path in sources() if not is_fresh(path)]
    for path in stale:
        log.info("executing %s (no executed copy from the test suite for these sources)", path.name)
        execute(path)
    log.info("notebooks: %d read as the test suite executed them, %d executed now",
             len(sources()) - len(stale), len(stale))


@event_priority(50)  # before mkdocs-jupyter's on_files (priority 0), which makes the .ipynb files pages
def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    for path in sources():
        files.append(File(f"{SITE_DIR}/{path.name}", str(EXECUTED.parent), config["site_dir"],
                          config["use_directory_urls"]))
    return files
