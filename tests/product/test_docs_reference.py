"""The API reference lists public names only, each once (docs/hooks/api.py, checked without a build)."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dpcert_docs_api", ROOT / "docs/hooks/api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reference_pages_cover_every_export_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.api"):
        _hook().on_pre_build({"docs_dir": str(ROOT / "docs")})
    assert not caplog.records, [r.getMessage() for r in caplog.records]


def test_public_members_are_exports_or_declared() -> None:
    hook = _hook()
    rounding = hook.public_members("accountant.core.rounding")
    assert rounding == ["div_up"]  # round_up, sum_up, ... are the wing's helpers, not exported
    conversions = hook.public_members("accountant.notions.conversions")
    assert "gdp_to_tradeoff" in conversions and "half_square_up" not in conversions
    assert hook.public_members("verify.strategies") == ["neighbouring"]
    for package in ("accountant", "mechanisms", "verify"):
        page = (ROOT / "docs/reference" / f"{package}.md").read_text(encoding="utf-8")
        for module in hook.DIRECTIVE.findall(page):
            assert all(not n.startswith("_") for n in hook.public_members(module))
            assert "._" not in module


def test_markdown_directives_get_members() -> None:
    class Page:
        class file:  # the shape of mkdocs' Page.file
            src_uri = "reference/accountant.md"

    out = _hook().on_page_markdown("::: accountant.core.rounding\n", page=Page())
    assert out == "::: accountant.core.rounding\n    options:\n      members: [div_up]\n"
