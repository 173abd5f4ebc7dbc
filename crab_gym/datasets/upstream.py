"""Read a user's own copy of an upstream REALM-Bench JSON file, whichever problem it holds.

The upstream repository has no license, so crab_gym ships none of its files; users point
:func:`load_realm_instance` at their own copy. The problem is recognised from the file's
keys (:func:`~crab_gym.envs.realm.common.upstream.problem_keys`, from each problem's ``upstream_keys`` in the index):

===========================================  =======  ============================================
keys                                         problem  converter
===========================================  =======  ============================================
``distances`` + ``time_windows``             P1       ``campus_tour.formats.from_upstream_p1``
``visitor_groups`` + ``tour_guides``         P2       ``group_tours.formats.from_upstream_p2``
``city_map`` + ``ride_requests``             P3       ``ridesharing.formats.from_upstream_p3``
the P3 keys + ``disruptions``                P4       ``ridesharing.formats.from_upstream_p4``
``guests`` + ``errands`` + ``travel_times``  P5       ``wedding.formats.from_upstream_p5``
the P5 keys + ``disruptions``                P8       ``wedding.formats.from_upstream_p8``
``cooking_tasks`` + ``family_members``       P6       ``thanksgiving.formats.from_upstream``
the P6 keys + ``disruptions``                P9       ``thanksgiving.formats.from_upstream``
``regions`` + ``resources``                  P7       ``disaster_relief.formats.from_upstream_p7``
``suppliers`` + ``facilities`` + ...         P10      ``supply_chain.formats.from_upstream_p10``
===========================================  =======  ============================================
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.loading import read_json
from crab_gym.envs.realm.common.upstream import detect_problem, missing_key_error, partial_upstream, problem_keys
from crab_gym.envs.realm.index import problem_spec


def converter(problem: str) -> Callable[[Any, str], Any]:
    """The family converter of an upstream problem (``"P3"``), from the problem index."""
    return problem_spec(problem).part("upstream")


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
            "not a REALM-Bench P1-P10 file: expected the keys of one of "
            + "; ".join(f"{p}: {', '.join(k)}" for p, k in reversed(problem_keys()))
            + f" (found: {', '.join(sorted(map(str, data))) or 'none'})",
        )
    return converter(problem)(data, source)


def load_realm_instance(path: str | Path) -> Any:
    """Read an upstream REALM-Bench JSON file (P1-P10) and return crab_gym's instance for it.

    Units are converted to minutes from midnight and known upstream bugs repaired; each
    repair is reported as a :class:`~crab_gym.datasets.RealmRepairWarning`. A file that cannot
    be used raises :class:`~crab_gym.datasets.InstanceFormatError` naming the file and the
    field (or line, for malformed JSON).
    """
    path = Path(path)
    if not path.is_file():
        raise InstanceFormatError(str(path), "no such file")
    return convert_upstream(read_json(path), path.name)
