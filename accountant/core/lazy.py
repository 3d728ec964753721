"""Lazy package imports (PEP 562), so that ``import accountant`` and ``dpcert --help`` start fast.

A package's ``__init__`` keeps its exports as ordinary relative imports inside an
``if TYPE_CHECKING:`` block (the one list, read by mypy and by readers); ``lazy_exports`` reads the
same lines at run time and, on the first use of any exported name, imports every listed submodule
(so every registration a submodule makes has happened, as with eager imports) and binds the names.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any


class _LazyPackage(types.ModuleType):
    """A package whose exports load on first use. A submodule named like an export (``verify.audit``,
    the package, and ``verify.audit``, the function) does not hide the export when it is imported:
    the import system's binding of the submodule is skipped, and the export is found on use."""

    _lazy_names: frozenset[str] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        if (name in self._lazy_names and isinstance(value, types.ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            return
        super().__setattr__(name, value)


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package whose ``__init__`` is ``init_file``."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    where: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                    for alias in stmt.names:
                        where[alias.asname or alias.name] = "." + stmt.module

    module = sys.modules[package]
    module.__class__ = _LazyPackage
    object.__setattr__(module, "_lazy_names", frozenset(where))

    def load_all() -> None:
        module = sys.modules[package]
        for name, sub in where.items():
            setattr(module, name, getattr(importlib.import_module(sub, package), name))

    def __getattr__(name: str) -> Any:
        if name in where:
            load_all()
            return getattr(sys.modules[package], name)
        try:  # a submodule used as an attribute (``accountant.pld`` after ``import accountant``)
            return importlib.import_module(f".{name}", package)
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(where) | set(vars(sys.modules[package])))

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
