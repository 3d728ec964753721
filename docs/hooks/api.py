"""MkDocs hook: the API reference shows public names only, each once.

A name is public when its package exports it (``accountant.__all__``, ``mechanisms.__all__``,
``verify.__all__``: every public name is importable from the package) or when the module that defines
it declares it in its own ``__all__`` (``verify.plots``, ``verify.bcdp``, ...). Each ``::: module``
line of ``docs/reference/PACKAGE.md`` is given mkdocstrings' ``members`` option with that module's
public names, so helpers that a wing's modules share (no underscore, not exported) stay out. The
build warns (and so fails, in strict mode) when an exported name is on no page, when a module is
listed twice or lists no public name, and when one object would be documented twice.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import logging
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("accountant", "mechanisms", "verify")
DIRECTIVE = re.compile(r"^::: ([\w.]+)[ \t]*$", re.M)

log = logging.getLogger("mkdocs.hooks.api")


def exported(package: str) -> dict[str, str]:
    """The package's ``__all__``, each name mapped to the module its ``__init__`` imports it from."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    home: dict[str, str] = {}

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):  # the lazy packages import under ``if TYPE_CHECKING:``
                visit(stmt.body)
            elif isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                for alias in stmt.names:
                    home[alias.asname or alias.name] = f"{package}.{stmt.module}"

    visit(tree.body)
    names = importlib.import_module(package).__all__
    return {name: home.get(name, package) for name in names}


def public_members(module: str) -> list[str]:
    """The public names to document under ``::: module``, in the module's own order."""
    package = module.split(".")[0]
    names = [n for n, home in exported(package).items() if home == module]
    own = getattr(importlib.import_module(module), "__all__", None) if module != package else None
    names += [n for n in own or () if n not in names]
    return [n for n in names if not n.startswith("_")]


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if not page.file.src_uri.startswith("reference/"):
        return markdown

    def expand(match: re.Match[str]) -> str:
        module = match.group(1)
        members = public_members(module)
        if not members:
            log.warning("%s: `::: %s` has no public name (not exported by its package, no __all__)",
                        page.file.src_uri, module)
        return f"::: {module}\n    options:\n      members: [{', '.join(members)}]"

    return DIRECTIVE.sub(expand, markdown)


def on_pre_build(config: Any, **kwargs: Any) -> None:
    """Every exported name on exactly one reference page, no module twice, no object twice."""
    seen_modules: dict[str, str] = {}
    seen_objects: dict[int, str] = {}
    covered: set[tuple[str, str]] = set()
    for package in PACKAGES:
        page = Path(config["docs_dir"]) / "reference" / f"{package}.md"
        for module in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            if module in seen_modules:
                log.warning("reference: %s is listed twice (%s and %s)",
                            module, seen_modules[module], page.name)
            seen_modules[module] = page.name
            loaded = importlib.import_module(module)
            for name in public_members(module):
                covered.add((module.split(".")[0], name))
                obj = getattr(loaded, name)
                if inspect.isclass(obj) or inspect.isfunction(obj):
                    where = f"{module}.{name}"
                    if id(obj) in seen_objects:
                        log.warning("reference: %s is documented twice (as %s and %s)",
                                    obj.__qualname__, seen_objects[id(obj)], where)
                    seen_objects[id(obj)] = where
        for name in exported(package):
            if (package, name) not in covered:
                log.warning("reference/%s.md: %s.%s is exported but on no page", package, package, name)
