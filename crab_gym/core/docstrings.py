"""Parse Google- and NumPy-style docstrings into a summary and parameter descriptions.

LLM agents only see an action through its JSON schema, so every parameter needs a
description. Writing them twice (docstring and schema) drifts; we read them from the
docstring the author writes anyway.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_GOOGLE_SECTIONS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "returns",
    "return",
    "yields",
    "raises",
    "examples",
    "example",
    "notes",
    "note",
    "attributes",
    "see also",
    "references",
    "warnings",
    "warning",
}
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_GOOGLE_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(:.*)?$")


@dataclass
class ParsedDocstring:
    """The parts of a docstring that a schema needs."""

    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into its description and per-parameter descriptions.

    Supports Google style (``Args:`` followed by ``name (type): text``) and NumPy style
    (``Parameters`` underlined with dashes, then ``name : type`` and indented text).
    Continuation lines are joined with single spaces.
    """
    if not doc:
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    base_indent = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        header = stripped.rstrip(":").lower()
        numpy_header = (
            i + 1 < len(lines)
            and re.fullmatch(r"-{3,}", lines[i + 1].strip() or "x") is not None
            and header in _GOOGLE_SECTIONS
        )
        if numpy_header:
            section, current = ("numpy-params" if header in _PARAM_SECTIONS else "other"), None
            i += 2
            continue
        if stripped.endswith(":") and header in _GOOGLE_SECTIONS and not line.startswith(" "):
            section, current = ("google-params" if header in _PARAM_SECTIONS else "other"), None
            base_indent = -1
            i += 1
            continue
        if section is None:
            summary.append(stripped)
        elif section == "google-params" and stripped:
            indent = len(line) - len(line.lstrip())
            if base_indent < 0:
                base_indent = indent
            match = _GOOGLE_PARAM.match(stripped)
            if indent <= base_indent and match:
                current = match.group(1).lstrip("*")
                params[current] = match.group(3).strip()
            elif current is not None:
                params[current] = (params[current] + " " + stripped).strip()
        elif section == "numpy-params" and stripped:
            indent = len(line) - len(line.lstrip())
            match = _NUMPY_PARAM.match(stripped)
            if indent == 0 and match:
                current = match.group(1).lstrip("*")
                params[current] = ""
            elif current is not None:
                params[current] = (params[current] + " " + stripped).strip()
        i += 1
    text = " ".join(part for part in _paragraphs(summary))
    return ParsedDocstring(summary=text.strip(), params=params)


def _paragraphs(lines: list[str]) -> list[str]:
    """Join wrapped lines; keep paragraph breaks as single spaces."""
    out: list[str] = []
    buf: list[str] = []
    for line in lines:
        if line:
            buf.append(line)
        elif buf:
            out.append(" ".join(buf))
            buf = []
    if buf:
        out.append(" ".join(buf))
    return out
