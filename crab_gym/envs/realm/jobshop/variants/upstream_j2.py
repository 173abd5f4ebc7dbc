"""The J1 instance inside an upstream REALM-Bench J2 file.

Upstream J2 files keep the job shop only as text in ``base_instance.raw_content`` (standard
or Taillard form, as the J1 file it came from), and that text is cut after the file's first
10 lines, which is less than the whole instance for every upstream file. So when the text
does not parse, the J1 file named by ``base_instance.source_file`` (a path relative to the
``datasets`` folder, e.g. ``J1/TA/TA01.txt``) is read instead, if it can be found under a
folder above the J2 file or under ``CRAB_GYM_REALM_DIR``, and if it begins with the text
(a repair, reported as a warning). Otherwise the error names the file and the field.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.jobshop.formats import detect_format, parse_standard, parse_taillard, read_jssp_file
from crab_gym.envs.realm.jobshop.model import JSSPInstance

#: The environment variable naming a user's upstream ``datasets`` folder (also used by tests).
REALM_DIR_VAR = "CRAB_GYM_REALM_DIR"


def _parse_text(text: str, source: str) -> JSSPInstance:
    if detect_format(text) == "taillard":
        return parse_taillard(text, source=source)
    return parse_standard(text, source=source)


def _roots(source: str) -> list[Path]:
    """Folders a ``source_file`` may be relative to: those above the J2 file, then the
    user's ``CRAB_GYM_REALM_DIR``."""
    roots = list(Path(source).resolve().parents) if Path(source).is_file() else []
    if os.environ.get(REALM_DIR_VAR):
        roots.append(Path(os.environ[REALM_DIR_VAR]))
    return roots


def _find_source_file(relative: Any, source: str) -> Path | None:
    """The J1 file ``base_instance.source_file`` names, only below one of :func:`_roots`
    (a relative path without ``..``: a data file must not point anywhere else)."""
    if not isinstance(relative, str) or not relative.strip():
        return None
    rel = PurePosixPath(relative.strip().replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts:
        raise InstanceFormatError(source, f"expected a path relative to the datasets folder, got {relative!r}",
                                  field="base_instance.source_file")
    for root in _roots(source):
        candidate = root.joinpath(*rel.parts)
        if candidate.is_file():
            return candidate
    return None


def _same_start(text: str, full: str) -> bool:
    head = [line.rstrip() for line in text.strip("\n").splitlines()]
    return [line.rstrip() for line in full.splitlines()[: len(head)]] == head


def base_instance(base: Mapping[str, Any], source: str) -> JSSPInstance:
    """The J1 instance of a J2 file's ``base_instance`` (see the module docstring)."""
    text = base.get("raw_content")
    if not isinstance(text, str) or not text.strip():
        raise InstanceFormatError(source, "expected the J1 instance as text", field="base_instance.raw_content")
    try:
        return _parse_text(text, f"{source}: base_instance.raw_content")
    except InstanceFormatError as exc:
        problem, line = exc.problem, exc.line
    relative = base.get("source_file")
    path = _find_source_file(relative, source)
    if path is None:
        hint = (f"; the whole J1 file base_instance.source_file {relative!r} was not found above the file "
                f"nor under ${REALM_DIR_VAR}" if relative else "")
        raise InstanceFormatError(source, f"{problem}{hint}", field="base_instance.raw_content", line=line)
    full = path.read_text(encoding="utf-8", errors="replace")
    if not _same_start(text, full):
        raise InstanceFormatError(source, f"{path} does not begin with base_instance.raw_content",
                                  field="base_instance.source_file")
    n_lines = len(text.strip("\n").splitlines())
    warnings.warn(f"{source}: base_instance.raw_content holds only the first {n_lines} lines of {relative} "
                  f"({problem}): the instance is read from {path}", RealmRepairWarning, stacklevel=3)
    return read_jssp_file(path)
