"""Recognise an upstream REALM-Bench file by its keys (upstream files carry no problem tag).

The converters live in the families; :mod:`crab_gym.datasets.upstream` dispatches a file to
its family. These helpers let a family's loader tell an upstream file from crab_gym's own
format, and name the detection key an upstream-shaped file lacks.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError

#: The key every upstream REALM-Bench file has and crab_gym's own formats never use (they
#: have ``name``): with it, a family's loader knows a file is upstream's even when the file
#: lacks the one key that tells its problem (:func:`is_upstream_for`).
UPSTREAM_ID = "instance_id"

#: ``(problem, required keys)`` in detection order, and the keys only upstream files use:
#: written by the problem index (:func:`use_problem_keys`) when it reads the families' records.
_TABLE: dict[str, Any] = {"keys": (), "marks": frozenset()}


def use_problem_keys(keys: tuple[tuple[str, tuple[str, ...]], ...], marks: frozenset[str]) -> None:
    """Set the detection table (the problem index calls it: the families' ``upstream_keys``
    and ``upstream_marks``). It lives here, below the families that use it, and is written
    from above, so that no module here imports upward."""
    _TABLE["keys"], _TABLE["marks"] = tuple(keys), frozenset(marks)


def problem_keys() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(problem, required keys)`` in detection order (P4 before P3)."""
    return _TABLE["keys"]


def _upstream_only() -> frozenset[str]:
    """Detection keys that crab_gym's own formats never use: one of them present marks a file
    as upstream-shaped even when another detection key is missing. (``disruptions`` is not
    among them: our own P4 format has it too.)"""
    return _TABLE["marks"]


def detect_problem(data: Any) -> str | None:
    """``"P1"`` .. ``"P10"`` from an upstream mapping's keys, or None if none matches."""
    if not isinstance(data, dict):
        return None
    for problem, keys in problem_keys():
        if all(k in data for k in keys):
            return problem
    return None


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
    marks = _upstream_only()
    for problem, keys in problem_keys():
        present = [k for k in keys if k in data and k in marks]
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
    keys = next(k for p, k in problem_keys() if p == problem)
    has = [k for k in keys if k in data] or [k for k in (UPSTREAM_ID,) if k in data]
    return InstanceFormatError(
        source,
        f"missing required key: the file looks like an upstream REALM-Bench {problem} file "
        f"(it has {', '.join(repr(k) for k in has)}) but has no {', '.join(repr(k) for k in missing)}",
        field=missing[0],
    )


def looks_upstream(data: Any) -> bool:
    """Whether a mapping is upstream-shaped (one of upstream's distinctive keys, or
    :data:`UPSTREAM_ID`), so that crab_gym's own format is not what it lacks."""
    return partial_upstream(data) is not None or (isinstance(data, dict) and UPSTREAM_ID in data)


def is_upstream_for(data: Any, source: str, problems: tuple[str, ...], what: str) -> bool:
    """Whether ``data`` is a complete upstream file of one of ``problems``; False if it is not
    upstream-shaped at all (then it is crab_gym's own format). Raises
    :class:`InstanceFormatError` for an upstream file of another problem, or one missing a
    detection key (naming that key). ``what`` names the expected problem in the error."""
    partial = partial_upstream(data) or _by_its_id(data, problems)
    if partial is None:
        return False
    problem, missing = partial
    if problem not in problems:
        raise InstanceFormatError(source, f"this is a REALM-Bench {problem} file, not a {what} one")
    if missing:
        raise missing_key_error(data, problem, missing, source)
    return True


def _by_its_id(data: Any, problems: tuple[str, ...]) -> tuple[str, list[str]] | None:
    """``(problem, missing detection keys)`` for a mapping with :data:`UPSTREAM_ID` but none
    of upstream's distinctive keys (a P5 file without ``travel_times``): the one of
    ``problems`` whose detection keys it has most of. Else None (crab_gym's own format)."""
    if not isinstance(data, dict) or UPSTREAM_ID not in data:
        return None
    keys = dict(problem_keys())
    best = max(problems, key=lambda p: sum(k in data for k in keys.get(p, ())))
    missing = [k for k in keys.get(best, ()) if k not in data]
    return (best, missing) if missing else None
