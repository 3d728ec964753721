"""The code users copy from the how-to pages, the user guide and the home page runs as written.

Every ```python block of each page of docs/howto, of docs/guide and of docs/index.md is executed in
page order, in one namespace per page (a later block may use what an earlier one defined, as a
reader who copies the page in order does), and each block is reported as its own test. A block
that raises fails its test with the traceback. Blocks that are not executed here, each with the
reason in the test report:

- doctests (a block whose first line starts with ``>>>``): pytest's ``--doctest-glob=*.md`` runs them
  and checks their output (docs/howto and docs/guide are in the ``testpaths`` of pyproject.toml);
- a block whose first line is a comment ``# not run in CI: <why>`` (a Dask cluster, a long run): the
  reader sees the reason in the block itself;
- a block that imports one of the optional libraries of ``OPTIONAL`` when that library does not import
  here (as ``pytest.importorskip`` would).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = [*sorted((DOCS / "howto").glob("*.md")), *sorted((DOCS / "guide").glob("*.md")), DOCS / "index.md"]
#: the first line of a block that is shown but not executed here; the rest of the line says why
NOT_RUN = "# not run in CI:"
#: top-level names of the optional libraries the pages use (the extras of pyproject.toml)
OPTIONAL = ("dask", "diffprivlib", "distributed", "dp_accounting", "matplotlib", "opacus", "opendp",
            "pydp", "torch")
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


@dataclass(frozen=True)
class Outcome:
    """How one block fared: ``skipped`` (the reason) or ``error`` (the traceback), or neither."""

    skipped: str | None = None
    error: str | None = None


def blocks(text: str) -> list[str]:
    """The ```python blocks of a markdown page, in order."""
    return [m.group(1) for m in FENCE.finditer(text)]


def _missing_library(code: str) -> str | None:
    for name in OPTIONAL:
        if re.search(rf"^\s*(from|import) {name}\b", code, flags=re.M):
            try:
                importlib.import_module(name)
            except ImportError as exc:
                return f"{name} does not import: {exc}"
    return None


def run_block(code: str, where: str, namespace: dict[str, object]) -> Outcome:
    """Execute one block in the page's namespace, or say why it is not executed (module docstring)."""
    first = code.lstrip().split("\n", 1)[0]
    if first.startswith(">>>"):
        return Outcome(skipped="a doctest: run and checked by pytest --doctest-glob")
    if first.startswith(NOT_RUN):
        return Outcome(skipped=first.removeprefix("#").strip())
    missing = _missing_library(code)
    if missing is not None:
        return Outcome(skipped=missing)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, where, "exec"), namespace)
    except Exception:  # this block's failure; the page's later blocks still run
        return Outcome(error=traceback.format_exc())
    if "Traceback" in printed.getvalue():
        return Outcome(error="the block printed a traceback:\n" + printed.getvalue())
    return Outcome()


class PageRun:
    """A page's blocks executed in order in one namespace, each when its outcome is first asked
    for (so each test's duration is its own block's)."""

    def __init__(self, text: str, name: str) -> None:
        self.codes = blocks(text)
        self.name = name
        self.namespace: dict[str, object] = {"__name__": "__docs_example__"}
        self.outcomes: list[Outcome] = []

    def outcome(self, index: int) -> Outcome:
        while len(self.outcomes) <= index:
            i = len(self.outcomes)
            self.outcomes.append(run_block(self.codes[i], f"<{self.name}, python block {i}>", self.namespace))
        return self.outcomes[index]


@functools.cache
def _page_run(page: Path) -> PageRun:
    return PageRun(page.read_text(encoding="utf-8"), page.relative_to(DOCS).as_posix())


def _cases() -> list[object]:
    return [pytest.param(page, i, id=f"{page.relative_to(DOCS).as_posix()}-{i}")
            for page in PAGES for i in range(len(blocks(page.read_text(encoding="utf-8"))))]


@pytest.mark.parametrize(("page", "index"), _cases())
def test_doc_block_runs(page: Path, index: int) -> None:
    outcome = _page_run(page).outcome(index)
    if outcome.skipped is not None:
        pytest.skip(outcome.skipped)
    if outcome.error is not None:
        pytest.fail(outcome.error, pytrace=False)


def test_every_page_has_a_block() -> None:
    """The pages are found and their blocks parsed (an empty parametrisation would pass vacuously)."""
    assert len(PAGES) >= 15
    for page in PAGES:
        if page.name != "calibrate.md":  # the one page whose examples are all command lines
            assert blocks(page.read_text(encoding="utf-8")), page


def test_runner_fails_a_raising_block_and_skips_only_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner itself: one namespace, failures reported, and the three documented skips only."""
    monkeypatch.setattr(sys.modules[__name__], "OPTIONAL", ("dpcert_no_such_library",))
    page = "\n".join([
        "```python", "x = 2", "```", "",
        "```python", "y = x + 1", "```", "",
        "```python", "raise ValueError('broken example')", "```", "",
        "```python", "print(undefined_name)", "```", "",
        "```python", "# not run in CI: a long run", "raise RuntimeError('never run')", "```", "",
        "```python", ">>> 1 + 1", "2", "", "```", "",
        "```bash", "false", "```", "",
        "```python", "import dpcert_no_such_library", "```", "",
        "```python", "import no_such_module", "```", "",
        "```python", "assert y == 3", "```", "",
    ])
    run = PageRun(page, "synthetic")
    out = [run.outcome(i) for i in range(len(run.codes))]
    assert len(out) == 9
    assert out[0] == Outcome() and out[1] == Outcome() and out[8] == Outcome()  # one namespace
    assert out[2].error is not None and "ValueError: broken example" in out[2].error
    assert out[3].error is not None and "NameError" in out[3].error
    assert out[4].skipped == "not run in CI: a long run" and out[4].error is None
    assert out[5].skipped is not None and "doctest" in out[5].skipped
    assert out[6].skipped is not None and "dpcert_no_such_library does not import" in out[6].skipped
    assert out[7].error is not None and "ModuleNotFoundError" in out[7].error  # not optional: a failure
