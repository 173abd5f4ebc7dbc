"""Read a user's instance file without letting any bad input escape as a bare exception.

Every loader reads user files through here, so that each way a file can be unreadable is
reported once, the same way: an :class:`~crab_gym.envs.realm.common.errors.InstanceFormatError` that
names the file and, for JSON, the dotted path of the field (``ride_requests[2].deadline``)
and the line.

Handled here: bytes that are not UTF-8 (``UnicodeDecodeError``); a byte-order mark; JSON
syntax errors; nesting deep enough to exhaust Python's recursion (``RecursionError``);
``NaN``/``Infinity`` literals; integers with thousands of digits (Python's int/str limit
raises ``ValueError``) and any number beyond ±2^53, which cannot be a meaningful time,
count or coordinate and would overflow the solvers (``OverflowError``). Range checks of
each field (negative times, ...) belong to the instance models.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError

#: No instance format nests deeper than a handful of levels.
MAX_DEPTH = 32

#: Largest magnitude of a number in a JSON instance file: the exact-integer range of a
#: float64 (I-JSON, RFC 7493). Models bound each field more tightly.
MAX_JSON_NUMBER = 2**53 - 1


class _BadNumber:
    """A number token that must not become a Python number (kept to report its path)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __repr__(self) -> str:
        return self.token if len(self.token) <= 24 else f"{self.token[:12]}...({len(self.token)} digits)"


def _parse_int(token: str) -> int | _BadNumber:
    if len(token) > 20:  # also sidesteps Python's 4300-digit int/str limit
        return _BadNumber(token)
    value = int(token)
    return value if abs(value) <= MAX_JSON_NUMBER else _BadNumber(token)


def _parse_float(token: str) -> float | _BadNumber:
    value = float(token)
    return value if math.isfinite(value) and abs(value) <= MAX_JSON_NUMBER else _BadNumber(token)


def _path(frames: list[list[Any]]) -> str:
    """Dotted path of the scanner's current position (see :func:`_locate`)."""
    out = ""
    for kind, key, _ in frames:
        if kind == "[":
            out += f"[{key}]"
        elif key is not None:
            out += f".{key}" if key.isidentifier() else f"[{key!r}]"
    return out.lstrip(".")


def _short(path: str, limit: int = 60) -> str:
    """A dotted path cut to ``limit`` characters (deep nesting makes very long ones)."""
    return path if len(path) <= limit else path[: limit - 3] + "..."


def _locate(text: str, *, offset: int | None = None, depth: int | None = None) -> tuple[str, int]:
    """(dotted path, line) in JSON ``text`` at character ``offset``, or where nesting first
    exceeds ``depth``. A forgiving scan: it never fails, even on broken JSON."""
    frames: list[list[Any]] = []  # [bracket, key or index, expecting a key]
    line, i, n = 1, 0, len(text)
    while i < n:
        if offset is not None and i >= offset:
            break
        c = text[i]
        if c == "\n":
            line += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and (offset is None or j < offset):
                j += 2 if text[j] == "\\" else 1
            if frames and frames[-1][0] == "{" and frames[-1][2]:
                frames[-1][1] = text[i + 1 : j]
            if offset is not None and j >= offset:
                break
            i = j
        elif c in "[{":
            if depth is not None and len(frames) >= depth:
                break
            frames.append([c, 0 if c == "[" else None, c == "{"])
        elif c in "]}":
            if frames:
                frames.pop()
        elif c == "," and frames:
            if frames[-1][0] == "[":
                frames[-1][1] += 1
            else:
                frames[-1][2] = True
        elif c == ":" and frames and frames[-1][0] == "{":
            frames[-1][2] = False
        i += 1
    return _path(frames) or "(top level)", line


def _check_tree(data: Any, source: str) -> None:
    """Reject bad number tokens and excessive nesting, naming the path (iterative walk)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, _BadNumber):
            if node.token.lstrip("-") in ("NaN", "Infinity"):
                problem = f"{node.token} is not a number JSON allows; expected a finite number"
            else:
                problem = (
                    f"the number {node!r} is too large: numbers in an instance file must lie within "
                    f"±{MAX_JSON_NUMBER} (2^53 - 1)"
                )
            raise InstanceFormatError(source, problem, field=_short(path or "(top level)"))
        if isinstance(node, (dict, list)):
            if depth >= MAX_DEPTH:
                raise InstanceFormatError(
                    source, f"nested more than {MAX_DEPTH} levels deep; no instance format nests so deep",
                    field=_short(path or "(top level)"),
                )
            if isinstance(node, dict):
                items = ((f"{path}.{k}" if str(k).isidentifier() else f"{path}[{k!r}]", v) for k, v in node.items())
            else:
                items = ((f"{path}[{k}]", v) for k, v in enumerate(node))
            for child_path, child in items:
                stack.append((child, child_path.lstrip("."), depth + 1))


def parse_json_text(text: str, source: str) -> Any:
    """Parse JSON ``text`` read from ``source``; every failure is an :class:`InstanceFormatError`."""
    try:
        data = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_BadNumber,  # NaN, Infinity, -Infinity
        )
    except json.JSONDecodeError as exc:
        field, _ = _locate(text, offset=exc.pos)
        raise InstanceFormatError(
            source, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno,
            field=None if field == "(top level)" else _short(field),
        ) from None
    except RecursionError:
        field, line = _locate(text, depth=MAX_DEPTH)
        raise InstanceFormatError(
            source, f"nested more than {MAX_DEPTH} levels deep; no instance format nests so deep",
            field=_short(field), line=line,
        ) from None
    _check_tree(data, source)
    return data


def decode_text(raw: bytes, source: str, *, json_paths: bool = False) -> str:
    """UTF-8 text of a file's bytes (a byte-order mark is dropped).

    Bytes that are not UTF-8 raise an :class:`InstanceFormatError` with the line and, when
    ``json_paths`` is set, the JSON field they sit in.
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8", "replace")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        bad = raw[exc.start : exc.start + 1].hex()
        field = None
        if json_paths:
            field, _ = _locate(raw.decode("utf-8", "replace"), offset=len(before))
        raise InstanceFormatError(
            source, f"byte 0x{bad} at column {column} is not UTF-8; save the file as UTF-8 text",
            field=field, line=line,
        ) from None


def read_bytes(path: str | Path, source: str | None = None) -> bytes:
    """A file's bytes; a missing or unreadable file is an :class:`InstanceFormatError`."""
    path = Path(path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InstanceFormatError(source or str(path), f"cannot read the file: {exc.strerror or exc}") from None


def read_text_file(path: str | Path, source: str | None = None) -> str:
    """A text instance file (JSSP standard or Taillard form) as a string, checked as UTF-8."""
    src = source or Path(path).name
    return decode_text(read_bytes(path, src), src)


def read_json_file(path: str | Path, source: str | None = None) -> Any:
    """A JSON instance file, parsed; every failure is an :class:`InstanceFormatError` naming
    ``source`` (default: the file name) and the field or line."""
    src = source or Path(path).name
    return parse_json_text(decode_text(read_bytes(path, src), src, json_paths=True), src)
