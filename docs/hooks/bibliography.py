"""MkDocs hook: pages that show text kept elsewhere (one source each): the bibliography lists the
entries of docs/references.bib, the glossary is the README's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

BIB = Path(__file__).resolve().parents[1] / "references.bib"
README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- entries of references.bib -->"
GLOSSARY = "<!-- README: Glossary -->"


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


def _glossary() -> str:
    text = README.read_text(encoding="utf-8")
    body = text.split("\n## Glossary\n", 1)[1].split("\n## ", 1)[0]
    return body.replace("(docs/references.bib)", "(bibliography.md)")


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, _entries())
    if GLOSSARY in markdown:
        markdown = markdown.replace(GLOSSARY, _glossary())
    return markdown
