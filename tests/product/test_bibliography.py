"""docs/references.bib: every work cited in the packages' docstrings and comments is an entry.

Citations use pandoc's syntax, ``[@key]`` or ``[@key, locator]`` (several works: ``[@a; @b, Thm 1]``),
as described at the top of the .bib file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIB = ROOT / "docs" / "references.bib"
PACKAGES = ("accountant", "mechanisms", "verify")

ENTRY = re.compile(r"^@(\w+)\{([^,\s]+),(.*?)^\}", re.M | re.S)
FIELD = re.compile(r"^\s*(\w+)\s*=\s*\{", re.M)
#: A citation key: ``@`` + first author's surname + year + a title word, not preceded by a word
#: character or a dot (so decorators and ``a @ b`` are not keys).
CITED = re.compile(r"(?<![\w.@])@([a-z]+\d{4}[a-z0-9]+)\b")
ABBREVIATIONS = re.compile(r"\b(DRS|CKS|KOV|BW18|BS16|DMNS)\b")
PROVENANCE = re.compile(r"\bseeds? 0\d\d\b|\bissue #?\d+\b|\bsession\b", re.I)


def entries() -> dict[str, tuple[str, set[str], str]]:
    text = BIB.read_text(encoding="utf-8")
    out: dict[str, tuple[str, set[str], str]] = {}
    for kind, key, body in ENTRY.findall(text):
        assert key not in out, f"duplicate key {key}"
        out[key] = (kind.lower(), {f.lower() for f in FIELD.findall(body)}, body)
    return out


def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def cited() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sources():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for key in CITED.findall(line):
                out.setdefault(key, []).append(f"{path.relative_to(ROOT)}:{n}")
    return out


def test_bib_parses_and_entries_are_complete() -> None:
    bib = entries()
    assert len(bib) >= 30
    for key, (kind, fields, body) in bib.items():
        assert {"author", "title", "year"} <= fields, f"{key} lacks {({'author', 'title', 'year'} - fields)}"
        year = re.search(r"^\s*year\s*=\s*\{(\d{4})\}", body, re.M)
        assert year is not None, f"{key}: year is not four digits"
        assert year.group(1) in key, f"{key}: the key's year differs from the entry's {year.group(1)}"
        assert kind in {"article", "inproceedings", "book", "misc", "incollection", "techreport"}, key


def test_every_cited_key_is_in_the_bib() -> None:
    bib = entries()
    keys = cited()
    assert len(keys) >= 25, "the citation syntax changed? almost nothing is cited"
    missing = {k: v for k, v in keys.items() if k not in bib}
    assert not missing, f"cited but not in docs/references.bib: {missing}"


@pytest.mark.parametrize("pattern", [ABBREVIATIONS, PROVENANCE], ids=["abbreviations", "provenance"])
def test_no_bare_abbreviations_or_provenance_in_packages(pattern: re.Pattern[str]) -> None:
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
            for p in sources()
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line)]
    assert not hits, "\n".join(hits)


def test_citation_brackets_are_closed() -> None:
    """Every ``[@`` opens a citation that closes (possibly on a following line of the same docstring)."""
    for path in sources():
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"\[@", text):
            close = text.find("]", m.start())
            assert close != -1 and "[@" not in text[m.start() + 2:close], \
                f"{path.relative_to(ROOT)}: unclosed citation at offset {m.start()}"


def test_readme_points_to_the_bibliography() -> None:
    assert "docs/references.bib" in (ROOT / "README.md").read_text(encoding="utf-8")
