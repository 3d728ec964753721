"""MkDocs hook: the bibliography page lists the entries of docs/references.bib (one source)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

BIB = Path(__file__).resolve().parents[1] / "references.bib"
MARKER = "<!-- entries of references.bib -->"


def _entries() -> str:
    text = BIB.read_text(encoding="utf-8")
    lines = []
    for key, body in re.findall(r"@\w+\{([^,\s]+),(.*?)\n\}", text, re.S):
        fields = {k.lower(): re.sub(r"[{}\\]", "", v).strip()
                  for k, v in re.findall(r"(\w+)\s*=\s*[{\"](.*?)[}\"],?\s*$", body, re.M)}
        venue = fields.get("journal") or fields.get("booktitle") or fields.get("publisher", "")
        lines.append(f"- **{key}**: {fields.get('author', '')}. *{fields.get('title', '')}*. "
                     f"{venue} {fields.get('year', '')}.")
    return "\n".join(sorted(lines))


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, _entries())
    return markdown
