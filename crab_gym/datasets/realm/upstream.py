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


def convert_upstream(data: Any, source: str = "<mapping>") -> Any:
    """Convert an already-parsed upstream mapping (see :func:`load_realm_instance`)."""
    problem = detect_problem(data)
    if problem is None:
        if not isinstance(data, dict):
            raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
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
