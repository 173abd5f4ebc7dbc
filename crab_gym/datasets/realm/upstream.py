"""Read a user's own copy of an upstream REALM-Bench JSON file, whichever problem it holds.

The upstream repository has no license, so crab_gym ships none of its files; users point
:func:`load_realm_instance` at their own copy. The problem is recognised from the file's
keys (upstream files carry no problem tag):

==========================================  =======  =========================================
keys                                        problem  converter
==========================================  =======  =========================================
``distances`` + ``time_windows``            P1       ``crab_gym.datasets.realm.p1.from_upstream_p1``
``visitor_groups`` + ``tour_guides``        P2       ``crab_gym.datasets.realm.p2.from_upstream_p2``
``city_map`` + ``ride_requests``            P3       ``crab_gym.datasets.realm.p3.from_upstream_p3``
the P3 keys + ``disruptions``               P4       ``crab_gym.datasets.realm.p4.from_upstream_p4``
==========================================  =======  =========================================

Converters are imported lazily, so reading one problem never imports the others.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from crab_gym.datasets.errors import InstanceFormatError
from crab_gym.datasets.realm.loading import read_json

#: (problem, required keys, module, converter) in detection order (P4 before P3).
_PROBLEMS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("P4", ("city_map", "ride_requests", "disruptions"), "crab_gym.datasets.realm.p4", "from_upstream_p4"),
    ("P3", ("city_map", "ride_requests"), "crab_gym.datasets.realm.p3", "from_upstream_p3"),
    ("P2", ("visitor_groups", "tour_guides"), "crab_gym.datasets.realm.p2", "from_upstream_p2"),
    ("P1", ("distances", "time_windows"), "crab_gym.datasets.realm.p1", "from_upstream_p1"),
)


def detect_problem(data: Any) -> str | None:
    """``"P1"`` .. ``"P4"`` from an upstream mapping's keys, or None if none matches."""
    if not isinstance(data, dict):
        return None
    for problem, keys, _, _ in _PROBLEMS:
        if all(k in data for k in keys):
            return problem
    return None


#: Detection keys that crab_gym's own formats never use: one of them present marks a file as
#: upstream-shaped even when another detection key is missing. (``disruptions`` is not among
#: them: our own P4 format has it too.)
_UPSTREAM_ONLY = ("distances", "time_windows", "visitor_groups", "tour_guides", "city_map", "ride_requests")


def partial_upstream(data: Any) -> tuple[str, list[str]] | None:
    """``(problem, missing detection keys)`` for a mapping that has some of an upstream
    problem's distinctive keys (``missing`` is empty for a complete match), else None.

    Lets a loader say "upstream P3 file without 'city_map'" instead of failing on a field
    of crab_gym's own format that an upstream file never has.
    """
    if not isinstance(data, dict):
        return None
    found = detect_problem(data)
    if found is not None:
        return found, []
    best: tuple[int, int, str, list[str]] | None = None  # (present, -missing, problem, missing)
    for problem, keys, _, _ in _PROBLEMS:
        present = [k for k in keys if k in data and k in _UPSTREAM_ONLY]
        missing = [k for k in keys if k not in data]
        if present and (best is None or (len(present), -len(missing)) > best[:2]):
            best = (len(present), -len(missing), problem, missing)
    if best is None:
        return None
    _, _, problem, missing = best
    if problem == "P3" and "disruptions" in data:
        problem = "P4"
    return problem, missing


def missing_key_error(data: dict, problem: str, missing: list[str], source: str) -> InstanceFormatError:
    """The error for an upstream-shaped mapping that lacks detection key(s) ``missing``."""
    keys = next(k for p, k, _, _ in _PROBLEMS if p == problem)
    has = [k for k in keys if k in data]
    return InstanceFormatError(
        source,
        f"missing required key: the file looks like an upstream REALM-Bench {problem} file "
        f"(it has {', '.join(repr(k) for k in has)}) but has no {', '.join(repr(k) for k in missing)}",
        field=missing[0],
    )


def is_upstream_for(data: Any, source: str, problems: tuple[str, ...], what: str) -> bool:
    """Whether ``data`` is a complete upstream file of one of ``problems``; False if it is not
    upstream-shaped at all (then it is crab_gym's own format). Raises
    :class:`InstanceFormatError` for an upstream file of another problem, or one missing a
    detection key (naming that key). ``what`` names the expected problem in the error."""
    partial = partial_upstream(data)
    if partial is None:
        return False
    problem, missing = partial
    if problem not in problems:
        raise InstanceFormatError(source, f"this is a REALM-Bench {problem} file, not a {what} one")
    if missing:
        raise missing_key_error(data, problem, missing, source)
    return True


def convert_upstream(data: Any, source: str = "<mapping>") -> Any:
    """Convert an already-parsed upstream mapping (see :func:`load_realm_instance`)."""
    problem = detect_problem(data)
    if problem is None:
        if not isinstance(data, dict):
            raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
        partial = partial_upstream(data)
        if partial is not None:
            raise missing_key_error(data, partial[0], partial[1], source)
        raise InstanceFormatError(
            source,
            "not a REALM-Bench P1-P4 file: expected the keys of one of "
            + "; ".join(f"{p}: {', '.join(k)}" for p, k, _, _ in reversed(_PROBLEMS))
            + f" (found: {', '.join(sorted(map(str, data))) or 'none'})",
        )
    _, _, module, func = next(entry for entry in _PROBLEMS if entry[0] == problem)
    converter = getattr(importlib.import_module(module), func)
    return converter(data, source)


def load_realm_instance(path: str | Path) -> Any:
    """Read an upstream REALM-Bench JSON file (P1-P4) and return crab_gym's instance for it.

    Units are converted to minutes from midnight and known upstream bugs repaired; each
    repair is reported as a :class:`~crab_gym.datasets.errors.RealmRepairWarning`. A file that
    cannot be used raises :class:`~crab_gym.datasets.errors.InstanceFormatError` naming the file
    and the field (or line, for malformed JSON).
    """
    path = Path(path)
    if not path.is_file():
        raise InstanceFormatError(str(path), "no such file")
    return convert_upstream(read_json(path), path.name)
