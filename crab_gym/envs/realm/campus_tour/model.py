"""REALM-Bench P1, the single-agent campus tour: instance model, generator, upstream reader.

The problem is a travelling-salesman tour with time windows (TSP-TW):

* **Decision**: the order in which one visitor walks from ``start`` (the entrance) through
  every other location and on to ``end`` (usually the entrance again).
* **Constraints**: the walk leaves ``start`` when it opens (``windows[start][0]``); each
  location is visited once, and the arrival there is no later than its closing time (arriving
  before it opens means waiting until it opens); the walk reaches ``end`` no later than
  ``end``'s closing time; the total *travel* time is at most ``max_travel``.
* **Objective**: minimise the total travel time (the sum of the legs walked), in minutes.

Units: every time is an integer number of minutes; clock times are minutes from midnight.

Upstream REALM-Bench writes ``max_duration`` (180): with its opening hours spread over a
working day, no tour can *finish* within 180 minutes of leaving, so the bound is only
consistent with the data as a bound on the travel time alone. That is the reading here
(``max_travel``), and waiting time is not counted against it.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem, InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, Coordinate, NonNegInt, is_number, too_large
from crab_gym.envs.realm.common.loading import load_instance, shipped_names, validate_model, validation_error
from crab_gym.envs.realm.common.upstream import is_upstream_for

Size = Literal["small", "medium", "large"]

#: Number of locations to visit (the entrance excluded) drawn for each size class.
SIZE_TARGETS: dict[str, tuple[int, int]] = {"small": (5, 7), "medium": (12, 15), "large": (25, 35)}

INSTANCE_DIR = Path(__file__).with_name("instances")

_BUILDINGS = (
    "library", "cafeteria", "gym", "science_hall", "student_center", "admin_building",
    "art_museum", "chapel", "stadium", "bookstore", "lecture_hall", "chemistry_lab",
    "observatory", "music_hall", "engineering_hall", "medical_center", "theatre",
    "botanical_garden", "computer_lab", "law_school", "business_school", "language_center",
    "sports_field", "swimming_pool", "career_office", "history_museum", "physics_lab",
    "dormitory_north", "dormitory_south", "alumni_house", "innovation_hub", "media_lab",
    "clock_tower", "greenhouse", "planetarium", "robotics_lab", "mathematics_hall",
    "design_studio", "archive", "international_office",
)


class P1Instance(BaseModel):
    """One campus-tour instance; all times in minutes (clock times from midnight)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    locations: list[str] = Field(min_length=1, description="unique location names")
    start: str = Field(description="where the tour starts (the entrance)")
    end: str = Field(description="where the tour ends (usually the entrance)")
    travel: list[list[NonNegInt]] = Field(description="travel[i][j]: minutes from locations[i] to [j]")
    windows: list[tuple[NonNegInt, NonNegInt]] = Field(description="[open, close] clock minutes per location")
    max_travel: NonNegInt | None = Field(
        default=None, description="bound on the total travel minutes (upstream max_duration)"
    )
    coords: list[tuple[Coordinate, Coordinate]] | None = Field(
        default=None, description="map positions in metres, for rendering only"
    )
    size: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> P1Instance:
        n = len(self.locations)
        for i, name in enumerate(self.locations):
            if name in self.locations[:i]:
                raise FieldProblem(f"locations[{i}]", f"location {name!r} repeats; names must be unique")
        for key in ("start", "end"):
            if getattr(self, key) not in self.locations:
                raise FieldProblem(key, f"{getattr(self, key)!r} is not one of the locations")
        if len(self.travel) != n:
            raise FieldProblem(
                "travel", f"expected a {n}x{n} matrix (one row per location), got {len(self.travel)} rows"
            )
        for i, row in enumerate(self.travel):
            if len(row) != n:
                raise FieldProblem(f"travel[{i}]", f"expected {n} minutes (one per location), got {len(row)}")
        if len(self.windows) != n:
            raise FieldProblem(
                "windows", f"expected one [open, close] pair per location ({n}), got {len(self.windows)}"
            )
        for i, (lo, hi) in enumerate(self.windows):
            if lo > hi:
                raise FieldProblem(
                    f"windows[{i}]", f"opens at minute {lo}, after it closes ({hi}); expected open <= close"
                )
        if self.coords is not None and len(self.coords) != n:
            raise FieldProblem("coords", f"expected one point per location ({n}), got {len(self.coords)}")
        return self

    # -- conveniences -------------------------------------------------------------------
    @cached_property
    def index(self) -> dict[str, int]:
        """Location name -> row/column in ``travel`` and ``windows``."""
        return {name: i for i, name in enumerate(self.locations)}

    @property
    def n(self) -> int:
        return len(self.locations)

    @property
    def targets(self) -> list[str]:
        """The locations the tour must visit (all but start and end)."""
        return [loc for loc in self.locations if loc not in (self.start, self.end)]

    @property
    def departure(self) -> int:
        """Clock minute the tour leaves ``start``: its opening time."""
        return self.windows[self.index[self.start]][0]

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name or the drawing)."""
        core = self.model_dump(include={"locations", "start", "end", "travel", "windows", "max_travel"})
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return self.model_dump_json(indent=None, exclude_none=True)


# ---------------------------------------------------------------------------------------
# Seeded generator
# ---------------------------------------------------------------------------------------
def _round_down(x: float, step: int) -> int:
    return int(math.floor(x / step) * step)


def _round_up(x: float, step: int) -> int:
    return int(math.ceil(x / step) * step)


def _nearest_neighbour_2opt(travel: np.ndarray, start: int, nodes: list[int]) -> list[int]:
    """A decent (not optimal) closed tour over ``nodes`` from ``start``, ignoring windows."""
    order, here, left = [], start, set(nodes)
    while left:
        nxt = min(left, key=lambda j: (travel[here, j], j))
        order.append(nxt)
        left.remove(nxt)
        here = nxt

    def cost(seq: list[int]) -> int:
        path = [start, *seq, start]
        return int(sum(travel[a, b] for a, b in zip(path, path[1:])))

    best, improved = cost(order), True
    while improved:
        improved = False
        for i in range(len(order) - 1):
            for j in range(i + 1, len(order)):
                cand = order[:i] + order[i : j + 1][::-1] + order[j + 1 :]
                c = cost(cand)
                if c < best:
                    order, best, improved = cand, c, True
    return order


def generate_p1(
    size: Size = "small", seed: int = 0, name: str | None = None, n_targets: int | None = None
) -> P1Instance:
    """Draw a feasible campus tour of the given size class; the same seed gives the same tour.

    ``n_targets`` fixes the number of locations to visit (the entrance excluded) and names
    them after the first ``n_targets`` campus buildings in a fixed order, so every draw has
    the same location names (an env that draws a new tour per episode keeps its actions).

    Feasibility holds by construction: a hidden tour is planned first (a nearest-neighbour
    tour improved by 2-opt, with random pauses), every window is drawn around that tour's
    visit time, and ``max_travel`` is set above that tour's travel. Walking times come from
    map distances plus a climbing penalty, so they are asymmetric (uphill is slower) and obey
    the triangle inequality.
    """
    if size not in SIZE_TARGETS:
        raise ValueError(f"size must be one of {sorted(SIZE_TARGETS)}, got {size!r}")
    rng = np.random.default_rng([1, seed, list(SIZE_TARGETS).index(size)])
    lo, hi = SIZE_TARGETS[size]
    k = int(rng.integers(lo, hi + 1))
    names = ["entrance"] + [str(b) for b in rng.permutation(_BUILDINGS)[:k]]
    if n_targets is not None:
        if not 1 <= n_targets <= len(_BUILDINGS):
            raise ValueError(f"n_targets must be in 1..{len(_BUILDINGS)}, got {n_targets}")
        k = int(n_targets)
        names = ["entrance", *_BUILDINGS[:k]]
    n = k + 1

    xy = np.column_stack([rng.uniform(0, 1400, n), rng.uniform(0, 1000, n)])
    xy[0] = (700.0, 0.0)  # the entrance sits on the campus edge
    elevation = rng.uniform(0, 30, n)
    elevation[0] = 0.0
    dist = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    climb = np.maximum(0.0, elevation[None, :] - elevation[:, None])
    # 75 m per minute on the flat, 0.2 minute per metre climbed; ceil keeps the triangle rule.
    travel = np.ceil(dist / 75.0 + 0.2 * climb - 1e-9).astype(int)
    travel = np.maximum(travel, 1)
    np.fill_diagonal(travel, 0)

    order = _nearest_neighbour_2opt(travel, 0, list(range(1, n)))
    depart = 8 * 60 + 15 * int(rng.integers(0, 5))  # 08:00 .. 09:00
    pause_max = max(5, 420 // k)  # spreads the hidden tour over about a working day
    visit_time: dict[int, float] = {}
    t, here, walked = float(depart), 0, 0
    for j in order:
        t += travel[here, j] + rng.integers(0, pause_max + 1)  # walk, then an optional pause
        walked += int(travel[here, j])
        visit_time[j] = t
        here = j
    walked += int(travel[here, 0])
    back = t + travel[here, 0]
    closing = max(17 * 60, _round_up(back + rng.uniform(15, 60), 15))
    windows: list[tuple[int, int]] = [(depart, closing)] + [(0, 0)] * k
    for j, t in visit_time.items():
        if rng.random() < 0.25:  # an all-day location
            windows[j] = (depart, closing)
        else:
            windows[j] = (
                max(depart, _round_down(t - rng.uniform(0, 75), 15)),
                min(closing, _round_up(t + rng.uniform(10, 90), 15)),
            )
    max_travel = _round_up(walked * rng.uniform(1.05, 1.25), 5)

    return P1Instance(
        name=name or f"p1_{size}_seed{seed}",
        description=(
            f"Campus tour ({size}): visit {k} locations from the entrance within their opening "
            f"hours, walking at most {max_travel} minutes in total."
        ),
        locations=names,
        start="entrance",
        end="entrance",
        travel=travel.tolist(),
        windows=windows,
        max_travel=max_travel,
        coords=[(round(float(x), 1), round(float(y), 1)) for x, y in xy],
        size=size,
    )


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P1 JSON -> P1Instance
# ---------------------------------------------------------------------------------------
def _hours_to_minutes(value: Any, source: str, field: str) -> int:
    if not is_number(value) or too_large(value):
        raise InstanceFormatError(source, f"expected clock hours as a number, got {value!r}", field=field)
    if not 0 <= value <= 48:
        raise InstanceFormatError(source, f"expected clock hours in [0, 48], got {value!r}", field=field)
    return int(round(value * 60))


def _split_pair(key: str, names: set[str]) -> tuple[str, str] | None:
    """Split "a-b" where names may themselves contain '-' (try every dash)."""
    hits = [
        (key[:i], key[i + 1 :])
        for i, ch in enumerate(key)
        if ch == "-" and key[:i] in names and key[i + 1 :] in names
    ]
    return hits[0] if len(hits) == 1 else None


def from_upstream_p1(data: dict, source: str) -> P1Instance:
    """Convert a user's own upstream REALM-Bench P1 mapping into a :class:`P1Instance`.

    ``time_windows`` are clock hours and become minutes from midnight; ``distances`` are
    minutes already; ``max_duration`` becomes ``max_travel`` (see the module docstring).
    Repairs, each reported as a :class:`RealmRepairWarning`: a missing ``b-a`` distance
    filled from ``a-b``; an inverted window swapped; a location without a window given the
    span of all windows; non-integer minutes rounded. Anything else unusable raises
    :class:`InstanceFormatError` naming ``source`` and the field.
    """
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

    names, idx, n = set(locations), {x: i for i, x in enumerate(locations)}, len(locations)
    distances = data["distances"]
    if not isinstance(distances, dict):
        raise InstanceFormatError(source, "expected an object {\"a-b\": minutes}", field="distances")
    travel: list[list[float | None]] = [[None] * n for _ in range(n)]
    for key, val in distances.items():
        pair = _split_pair(str(key), names)
        field = f"distances[{key!r}]"
        if pair is None:
            raise InstanceFormatError(source, "key is not 'from-to' over known locations", field=field)
        if not is_number(val) or too_large(val) or val < 0:
            raise InstanceFormatError(
                source, f"expected minutes in [0, {MAX_QUANTITY}], got {val!r}", field=field
            )
        travel[idx[pair[0]]][idx[pair[1]]] = float(val)
    rounded = 0
    matrix = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            val = travel[i][j]
            if val is None:
                back = travel[j][i]
                if back is None:
                    raise InstanceFormatError(
                        source, "no distance in either direction",
                        field=f"distances['{locations[i]}-{locations[j]}']",
                    )
                warnings.warn(
                    f"{source}: distances['{locations[i]}-{locations[j]}'] missing; "
                    f"used '{locations[j]}-{locations[i]}' = {back:g}",
                    RealmRepairWarning, stacklevel=2,
                )
                val = back
            if val != int(val):
                rounded += 1
            matrix[i][j] = int(math.floor(val + 0.5))
    if rounded:
        warnings.warn(
            f"{source}: rounded {rounded} non-integer distances to whole minutes",
            RealmRepairWarning, stacklevel=2,
        )

    raw_windows = data["time_windows"]
    if not isinstance(raw_windows, dict):
        raise InstanceFormatError(source, "expected an object {location: [open, close]}", field="time_windows")
    for key in raw_windows:
        if key not in names:
            raise InstanceFormatError(source, "not one of the locations", field=f"time_windows[{key!r}]")
    windows: dict[str, tuple[int, int]] = {}
    for loc, val in raw_windows.items():
        field = f"time_windows[{loc!r}]"
        if not isinstance(val, (list, tuple)) or len(val) != 2:
            raise InstanceFormatError(source, f"expected [open_hour, close_hour], got {val!r}", field=field)
        lo = _hours_to_minutes(val[0], source, field + "[0]")
        hi = _hours_to_minutes(val[1], source, field + "[1]")
        if hi < lo:
            warnings.warn(
                f"{source}: {field} is inverted ({val[0]}, {val[1]}); swapped",
                RealmRepairWarning, stacklevel=2,
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
                RealmRepairWarning, stacklevel=2,
            )
            windows[loc] = span

    max_travel = data.get("max_duration")
    if max_travel is not None:
        if not is_number(max_travel) or too_large(max_travel) or max_travel < 0:
            raise InstanceFormatError(
                source, f"expected minutes in [0, {MAX_QUANTITY}], got {max_travel!r}", field="max_duration"
            )
        max_travel = int(math.floor(max_travel + 1e-9))

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


# ---------------------------------------------------------------------------------------
# Loading: shipped name | path | mapping | object
# ---------------------------------------------------------------------------------------
def shipped_p1_names() -> list[str]:
    """Names of the shipped P1 instances, sorted."""
    return shipped_names(INSTANCE_DIR, "p1")


def _from_mapping(data: Any, source: str) -> P1Instance:

    if is_upstream_for(data, source, ("P1",), "campus tour (P1)"):
        return from_upstream_p1(data, source)
    return validate_model(P1Instance, data, source)


def load_p1(instance: str | Path | dict | P1Instance) -> P1Instance:
    """A P1 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return load_instance(instance, P1Instance, instance_dir=INSTANCE_DIR, problem="P1", from_mapping=_from_mapping)
