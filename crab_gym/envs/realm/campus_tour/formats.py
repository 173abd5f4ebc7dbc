"""The files a P1 instance comes in, and the loader that tells them apart.

* crab_gym's own JSON: a :class:`~.model.P1Instance` dumped as is (the shipped instances);
* a user's own upstream REALM-Bench P1 file (clock hours, ``"a-b"`` distance keys,
  ``max_duration``), converted by :func:`from_upstream_p1`, which repairs what it can with a
  warning per repair and rejects the rest with an :class:`InstanceFormatError`.

:func:`load_p1` takes a shipped name, a path to either kind of file, a mapping or an instance.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

from pydantic import ValidationError

from crab_gym.envs.realm.campus_tour.model import INSTANCE_DIR, P1Instance
from crab_gym.envs.realm.common.clock_hours import hour_window
from crab_gym.envs.realm.common.distances import split_pair, whole_minutes
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.instance_files import InstanceFiles
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, is_number, too_large
from crab_gym.envs.realm.common.loading import validation_error


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P1 JSON -> P1Instance
# ---------------------------------------------------------------------------------------
def from_upstream_p1(data: dict, source: str) -> P1Instance:
    """Convert a user's own upstream REALM-Bench P1 mapping into a :class:`P1Instance`.

    ``time_windows`` are clock hours and become minutes from midnight; ``distances`` are
    minutes already; ``max_duration`` becomes ``max_travel`` (see :mod:`.model`).
    Repairs, each reported as a :class:`RealmRepairWarning`: a missing ``b-a`` distance
    filled from ``a-b``; an inverted window swapped; a location without a window given the
    span of all windows; non-integer minutes rounded. Anything else unusable raises
    :class:`InstanceFormatError` naming ``source`` and the field.
    """
    locations, start, end = _locations(data, source)
    matrix = _travel_minutes(data["distances"], locations, source)
    windows = _windows(data["time_windows"], locations, source)
    max_travel = _max_travel(data.get("max_duration"), source)
    try:
        return P1Instance(
            name=str(data.get("instance_id") or Path(str(source)).stem),
            description=str(data.get("description", "")),
            locations=list(locations),
            start=start,
            end=end,
            travel=matrix,
            windows=[windows[loc] for loc in locations],
            max_travel=max_travel,
        )
    except ValidationError as exc:  # pragma: no cover - the checks above catch these first
        raise validation_error(exc, source) from None


def _locations(data: object, source: str) -> tuple[list[str], str, str]:
    """The required keys present, and (locations, start, end) checked: distinct names, known ends."""
    if not isinstance(data, dict):
        raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
    for key in ("locations", "start_location", "distances", "time_windows"):
        if key not in data:
            raise InstanceFormatError(source, "missing required key", field=key)
    locations = data["locations"]
    if not isinstance(locations, list) or not locations or not all(isinstance(x, str) for x in locations):
        raise InstanceFormatError(source, "expected a non-empty list of names", field="locations")
    if len(set(locations)) != len(locations):
        raise InstanceFormatError(source, "location names repeat", field="locations")
    start = data["start_location"]
    end = data.get("end_location", start)
    for key, val in (("start_location", start), ("end_location", end)):
        if val not in locations:
            raise InstanceFormatError(source, f"{val!r} is not one of the locations", field=key)
    return locations, start, end


def _travel_minutes(distances: object, locations: list[str], source: str) -> list[list[int | None]]:
    """``{"a-b": minutes}`` -> the whole-minute matrix (a missing ``b-a`` filled from ``a-b``)."""
    names, idx, n = set(locations), {x: i for i, x in enumerate(locations)}, len(locations)
    if not isinstance(distances, dict):
        raise InstanceFormatError(source, "expected an object {\"a-b\": minutes}", field="distances")
    travel: list[list[float | None]] = [[None] * n for _ in range(n)]
    for key, val in distances.items():
        pair = split_pair(str(key), names)
        field = f"distances[{key!r}]"
        if pair is None:
            raise InstanceFormatError(source, "key is not 'from-to' over known locations", field=field)
        if not is_number(val) or too_large(val) or val < 0:
            raise InstanceFormatError(
                source, f"expected minutes in [0, {MAX_QUANTITY}], got {val!r}", field=field
            )
        travel[idx[pair[0]]][idx[pair[1]]] = float(val)
    # stacklevel 3: the repair warnings point at from_upstream_p1's caller
    return whole_minutes(travel, locations, source, "distances", missing="error", stacklevel=3)


def _windows(raw_windows: object, locations: list[str], source: str) -> dict[str, tuple[int, int]]:
    """Clock-hour windows -> minutes by location (inverted ones swapped, missing ones the span)."""
    names = set(locations)
    if not isinstance(raw_windows, dict):
        raise InstanceFormatError(source, "expected an object {location: [open, close]}", field="time_windows")
    for key in raw_windows:
        if key not in names:
            raise InstanceFormatError(source, "not one of the locations", field=f"time_windows[{key!r}]")
    windows: dict[str, tuple[int, int]] = {}
    for loc, val in raw_windows.items():
        field = f"time_windows[{loc!r}]"
        lo, hi = hour_window(val, source, field, names=("open_hour", "close_hour"))
        if hi < lo:
            warnings.warn(
                f"{source}: {field} is inverted ({val[0]}, {val[1]}); swapped",
                RealmRepairWarning, stacklevel=3,
            )
            lo, hi = hi, lo
        windows[loc] = (lo, hi)
    if windows:
        span = (min(w[0] for w in windows.values()), max(w[1] for w in windows.values()))
    else:
        span = (0, 24 * 60)
    for loc in locations:
        if loc not in windows:
            warnings.warn(
                f"{source}: time_windows[{loc!r}] missing; used the span of all windows "
                f"({span[0]}..{span[1]} minutes)",
                RealmRepairWarning, stacklevel=3,
            )
            windows[loc] = span
    return windows


def _max_travel(max_travel: object, source: str) -> int | None:
    """``max_duration`` as whole minutes (None: no limit)."""
    if max_travel is None:
        return None
    if not is_number(max_travel) or too_large(max_travel) or max_travel < 0:
        raise InstanceFormatError(
            source, f"expected minutes in [0, {MAX_QUANTITY}], got {max_travel!r}", field="max_duration"
        )
    return int(math.floor(max_travel + 1e-9))


# ---------------------------------------------------------------------------------------
# Loading: shipped name | path | mapping | object
# ---------------------------------------------------------------------------------------
#: The shipped P1 files, crab_gym's JSON and upstream's: one loader for all of them.
FILES = InstanceFiles("P1", P1Instance, INSTANCE_DIR, from_upstream_p1, "campus tour (P1)")


def shipped_p1_names() -> list[str]:
    """Names of the shipped P1 instances, sorted."""
    return FILES.names()


def load_p1(instance: str | Path | dict | P1Instance) -> P1Instance:
    """A P1 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return FILES.load(instance)
