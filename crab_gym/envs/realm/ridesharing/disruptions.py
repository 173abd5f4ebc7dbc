"""REALM-Bench P4, ride-sharing with disruptions: typed disruptions, instance, generator, reader.

P4 is P3 (see :mod:`crab_gym.envs.realm.ridesharing.model`) plus a schedule of disruptions that happen
at given minutes. Each disruption is a pydantic model with a ``type`` tag:

===================  ==================  ==================================================
type                 where               effect while active (``start <= t < start+duration``)
===================  ==================  ==================================================
``traffic_delay``    ``route`` "a-b"     ``delay`` minutes more on the road a-b
``road_closure``     ``route`` "a-b"     the road reopens at the end: a trip departing at
                                         ``t`` pays ``end - t`` more on it (or goes round)
``accident``         ``location``        ``delay`` minutes more (default 15) on every road
                                         touching the location
``construction``     ``route`` "a-b"     ``delay`` minutes more (default 10) on the road
===================  ==================  ==================================================

Roads are two-way: a disruption on ``a-b`` affects both directions. ``start`` is a minute from
midnight (``None``: "now", when a wrapper injects it); ``duration`` and ``delay`` are minutes.
``impact`` is upstream's free-text label, kept for display. A disruption naming a road or a
place the instance does not have, or with a negative duration or delay, is rejected with a
clear error (:class:`InvalidDisruptionError`).

Upstream shape: ``disruptions[{type, route | location, start_time (clock hour), duration
(minutes), delay (minutes, traffic_delay only), impact}]``; upstream accidents name their place
in ``location`` (``route`` is accepted as well).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem, InstanceFormatError
from crab_gym.envs.realm.common.limits import NonNegInt
from crab_gym.envs.realm.common.loading import load_instance, shipped_names, validate_model, validation_error
from crab_gym.envs.realm.common.upstream import detect_problem, partial_upstream
from crab_gym.envs.realm.ridesharing.model import (
    SIZE_TARGETS,
    P3Instance,
    Size,
    _hours,
    _number,
    draw_city,
    from_mapping,
    plant_requests,
    upstream_p3_fields,
)
from crab_gym.envs.realm.ridesharing.network import split_route

INSTANCE_DIR = Path(__file__).with_name("instances") / "p4"

DISRUPTION_TYPES = ("traffic_delay", "road_closure", "accident", "construction")


class InvalidDisruptionError(ValueError):
    """A disruption that cannot apply to an instance (unknown road or place, bad numbers)."""


class _Disruption(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    start: NonNegInt | None = Field(default=None, description="minute from midnight; None = now")
    duration: NonNegInt = Field(description="minutes")
    impact: str = Field(default="", description="free-text label (upstream's 'impact')")

    @property
    def end(self) -> int | None:
        return None if self.start is None else self.start + self.duration

    @property
    def where(self) -> str:
        """The road or place it affects."""
        return getattr(self, "route", None) or getattr(self, "location", "")

    def added_minutes(self, at: int) -> int:
        """Extra minutes on each affected road for a trip departing at ``at``."""
        return int(getattr(self, "delay", 0))

    def roads(self, index: dict[str, int], names: Sequence[str]) -> list[tuple[int, int]]:
        """Affected directed roads as matrix index pairs (both directions of a route)."""
        pair = split_route(self.route, names)  # type: ignore[attr-defined]
        if pair is None:
            return []
        a, b = index[pair[0]], index[pair[1]]
        return [(a, b), (b, a)]

    def describe(self) -> str:
        when = "now" if self.start is None else f"{self.start // 60:02d}:{self.start % 60:02d}"
        extra = f", +{self.delay} min" if hasattr(self, "delay") else ""
        return f"{self.type} on {self.where} from {when} for {self.duration} min{extra}"  # type: ignore[attr-defined]

    def with_start(self, start: int) -> _Disruption:
        """The same disruption starting at ``start`` and ending when it would have ended."""
        end = self.end if self.end is not None else start + self.duration
        return self.model_copy(update={"start": int(start), "duration": max(0, int(end) - int(start))})


class TrafficDelay(_Disruption):
    """Heavy traffic on a road: ``delay`` more minutes."""

    type: Literal["traffic_delay"] = "traffic_delay"
    route: str = Field(min_length=3, description='road "a-b"')
    delay: NonNegInt = Field(description="extra minutes")


class RoadClosure(_Disruption):
    """A closed road: usable again at the end of the closure."""

    type: Literal["road_closure"] = "road_closure"
    route: str = Field(min_length=3, description='road "a-b"')

    def added_minutes(self, at: int) -> int:
        return max(0, int(self.end) - int(at)) if self.end is not None else 0


class Accident(_Disruption):
    """An accident at a place: every road touching it is slower."""

    type: Literal["accident"] = "accident"
    location: str = Field(min_length=1)
    delay: NonNegInt = Field(default=15, description="extra minutes on each touching road")

    def roads(self, index: dict[str, int], names: Sequence[str]) -> list[tuple[int, int]]:
        x = index.get(self.location)
        if x is None:
            return []
        return [(x, j) for j in range(len(names)) if j != x] + [(i, x) for i in range(len(names)) if i != x]


class Construction(_Disruption):
    """Roadworks on a road: slower while they last."""

    type: Literal["construction"] = "construction"
    route: str = Field(min_length=3, description='road "a-b"')
    delay: NonNegInt = Field(default=10, description="extra minutes")


Disruption = Annotated[TrafficDelay | RoadClosure | Accident | Construction, Field(discriminator="type")]
_DISRUPTION_ADAPTER: TypeAdapter = TypeAdapter(Disruption)


def check_disruption_fits(d: _Disruption, locations: Sequence[str], roads: Sequence[Sequence[int | None]]) -> None:
    """Raise :class:`InvalidDisruptionError` if ``d`` names a road or place not in the instance."""
    if isinstance(d, Accident):
        if d.location not in locations:
            raise InvalidDisruptionError(
                f"accident: unknown location {d.location!r}; known: {', '.join(locations)}"
            )
        return
    pair = split_route(d.route, locations)  # type: ignore[attr-defined]
    if pair is None:
        raise InvalidDisruptionError(
            f"{d.type}: unknown route {d.route!r}; a route is 'a-b' with a and b among: "  # type: ignore[attr-defined]
            f"{', '.join(locations)}"
        )
    i, j = locations.index(pair[0]), locations.index(pair[1])
    if roads[i][j] is None and roads[j][i] is None:
        raise InvalidDisruptionError(
            f"{d.type}: unknown route {d.route!r}: no road joins {pair[0]} and {pair[1]} in this city"  # type: ignore[attr-defined]
        )


def parse_disruption(data: Any, instance: P3Instance | None = None) -> _Disruption:
    """A typed disruption from a mapping (or a model), checked against ``instance`` if given.

    Raises :class:`InvalidDisruptionError` with a readable message for an unknown type, a
    negative duration or delay, or a road/place the instance lacks.
    """
    if isinstance(data, _Disruption):
        d = data
    else:
        try:
            d = _DISRUPTION_ADAPTER.validate_python(data)
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err.get("loc", ()))
                problems.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
            raise InvalidDisruptionError(
                f"invalid disruption {data!r}: " + "; ".join(problems)
                + f" (types: {', '.join(DISRUPTION_TYPES)})"
            ) from None
    if instance is not None:
        check_disruption_fits(d, instance.locations, instance.roads)
    return d


class P4Instance(P3Instance):
    """A P3 instance plus its schedule of disruptions (each with a start minute)."""

    disruptions: list[Disruption] = Field(default_factory=list)

    @model_validator(mode="after")
    def _disruptions_fit(self) -> P4Instance:
        for k, d in enumerate(self.disruptions):
            if d.start is None:
                raise FieldProblem(f"disruptions[{k}].start", "a scheduled disruption needs a start minute")
            try:
                check_disruption_fits(d, self.locations, self.roads)
            except InvalidDisruptionError as exc:
                raise FieldProblem(f"disruptions[{k}]", str(exc)) from None
        return self

    def to_upstream(self) -> dict[str, Any]:
        """This instance in upstream REALM-Bench's P4 shape (start_time in hours)."""
        out = super().to_upstream()
        items = []
        for d in self.disruptions:
            item: dict[str, Any] = {"type": d.type}
            if isinstance(d, Accident):
                item["location"] = d.location
            else:
                item["route"] = d.route
            item["start_time"] = d.start / 60.0
            item["duration"] = d.duration
            if isinstance(d, TrafficDelay):
                item["delay"] = d.delay
            elif isinstance(d, (Accident, Construction)):
                item["delay"] = d.delay  # not upstream, but keeps our reading on a round trip
            item["impact"] = d.impact
            items.append(item)
        out["disruptions"] = items
        out["description"] = self.description or "Urban ride-sharing with disruptions instance"
        return out


# ---------------------------------------------------------------------------------------
# Seeded generator
# ---------------------------------------------------------------------------------------
_IMPACTS = {
    "traffic_delay": "increased_travel_time",
    "road_closure": "route_unavailable",
    "accident": "local_traffic_congestion",
    "construction": "reduced_capacity",
}

#: Number of disruptions per size class.
N_DISRUPTIONS = {"small": (1, 2), "medium": (2, 3), "large": (3, 5)}


def draw_disruptions(
    rng: np.random.Generator, size: str, names: list[str], first: int, last: int
) -> list[_Disruption]:
    """Disruptions starting between ``first`` and ``last`` (minutes, on 15-minute marks)."""
    lo, hi = N_DISRUPTIONS[size]
    out: list[_Disruption] = []
    for _ in range(int(rng.integers(lo, hi + 1))):
        kind = DISRUPTION_TYPES[int(rng.integers(len(DISRUPTION_TYPES)))]
        start = 15 * int(rng.integers(first // 15, last // 15 + 1))
        duration = 15 * int(rng.integers(2, 9))  # 30 .. 120 minutes
        a, b = (str(x) for x in rng.choice(names, size=2, replace=False))
        common = {"start": start, "duration": duration, "impact": _IMPACTS[kind]}
        if kind == "traffic_delay":
            out.append(TrafficDelay(route=f"{a}-{b}", delay=5 * int(rng.integers(2, 9)), **common))
        elif kind == "road_closure":
            out.append(RoadClosure(route=f"{a}-{b}", **common))
        elif kind == "accident":
            out.append(Accident(location=a, delay=5 * int(rng.integers(2, 6)), **common))
        else:
            out.append(Construction(route=f"{a}-{b}", delay=5 * int(rng.integers(1, 5)), **common))
    return sorted(out, key=lambda d: (d.start, d.type, d.where))


def generate_p4(size: Size = "small", seed: int = 0, name: str | None = None) -> P4Instance:
    """Draw a ride-sharing instance with disruptions; the same seed gives the same instance.

    The disruptions are drawn first and the hidden plan behind the requests is driven
    *through* them, so every generated instance can serve all its requests even with the
    disruptions (though not necessarily with a plan made before they were known).
    """
    return generate_p4_with_plan(size, seed, name)[0]


def generate_p4_with_plan(
    size: Size = "small", seed: int = 0, name: str | None = None
) -> tuple[P4Instance, dict[str, list[str]]]:
    """:func:`generate_p4` and the hidden plan that serves every request through the
    disruptions (a feasibility proof)."""
    if size not in SIZE_TARGETS:
        raise ValueError(f"size must be one of {sorted(SIZE_TARGETS)}, got {size!r}")
    rng = np.random.default_rng([4, seed, list(SIZE_TARGETS).index(size)])
    names, coords, roads = draw_city(rng, size)
    start_time = 7 * 60
    span = {"small": 150, "medium": 240, "large": 300}[size]
    disruptions = draw_disruptions(rng, size, names, start_time + 30, start_time + span)
    vehicles, requests, hidden = plant_requests(rng, size, names, roads, tuple(disruptions), start_time)
    inst = P4Instance(
        name=name or f"p4_{size}_seed{seed}",
        description=(
            f"Urban ride-sharing with disruptions ({size}): {len(vehicles)} vehicles serve "
            f"{len(requests)} requests across {len(names)} places; {len(disruptions)} disruptions."
        ),
        size=size,
        locations=names,
        roads=roads,
        coords=coords,
        requests=requests,
        vehicles=vehicles,
        start_time=start_time,
        disruptions=disruptions,
    )
    return inst, hidden


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P4 JSON -> P4Instance
# ---------------------------------------------------------------------------------------
def _parse_upstream_disruption(item: Any, k: int, source: str, locations: list[str], roads) -> _Disruption:
    base = f"disruptions[{k}]"
    if not isinstance(item, dict):
        raise InstanceFormatError(source, "expected an object", field=base)
    kind = item.get("type")
    if kind not in DISRUPTION_TYPES:
        raise InstanceFormatError(
            source, f"unknown type {kind!r}; expected one of {', '.join(DISRUPTION_TYPES)}", field=f"{base}.type"
        )
    if "start_time" not in item:
        raise InstanceFormatError(source, "missing required key", field=f"{base}.start_time")
    if "duration" not in item:
        raise InstanceFormatError(source, "missing required key", field=f"{base}.duration")
    start = _hours(item["start_time"], source, f"{base}.start_time")
    duration = int(round(_number(item["duration"], source, f"{base}.duration")))
    fields: dict[str, Any] = {"type": kind, "start": start, "duration": duration, "impact": str(item.get("impact", ""))}
    where = item.get("location") if kind == "accident" else item.get("route")
    if where is None:
        where = item.get("route") if kind == "accident" else item.get("location")
    key = "location" if kind == "accident" else "route"
    if not isinstance(where, str) or not where:
        what = "a place" if kind == "accident" else 'a road "a-b"'
        raise InstanceFormatError(source, f"expected {what}", field=f"{base}.{key}")
    fields[key] = where
    if "delay" in item:
        fields["delay"] = int(round(_number(item["delay"], source, f"{base}.delay")))
    elif kind == "traffic_delay":
        raise InstanceFormatError(source, "a traffic_delay needs 'delay' (minutes)", field=f"{base}.delay")
    if kind == "road_closure":
        fields.pop("delay", None)
    try:
        d = _DISRUPTION_ADAPTER.validate_python(fields)
        check_disruption_fits(d, locations, roads)
    except (ValidationError, InvalidDisruptionError) as exc:
        raise InstanceFormatError(source, str(exc).splitlines()[0], field=f"{base}.{key}") from None
    return d


def from_upstream_p4(data: dict, source: str) -> P4Instance:
    """Convert a user's own upstream REALM-Bench P4 mapping into a :class:`P4Instance`.

    Everything of :func:`~crab_gym.envs.realm.ridesharing.model.from_upstream_p3` (units, the
    inverted-window repair, the ``deadline`` reading) plus the disruptions: ``start_time``
    hours become minutes from midnight; ``duration`` and ``delay`` are minutes.
    """
    fields = upstream_p3_fields(data, source)
    raw = data.get("disruptions", [])
    if not isinstance(raw, list):
        raise InstanceFormatError(source, f"expected a list, got {type(raw).__name__}", field="disruptions")
    fields["disruptions"] = [
        _parse_upstream_disruption(item, k, source, fields["locations"], fields["roads"])
        for k, item in enumerate(raw)
    ]
    try:
        return P4Instance(**fields)
    except ValidationError as exc:  # pragma: no cover - the checks above catch these first
        raise validation_error(exc, source) from None


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------
def shipped_p4_names() -> list[str]:
    """Names of the shipped P4 instances, sorted."""
    return shipped_names(INSTANCE_DIR, "p4")


def _from_mapping(data: Any, source: str) -> P4Instance:
    """Our own P4 JSON, an upstream P4 file (with its disruptions), else anything
    :func:`~crab_gym.envs.realm.ridesharing.model.from_mapping` reads."""
    if isinstance(data, dict) and "disruptions" in data and partial_upstream(data) is None:
        return validate_model(P4Instance, data, source)
    if detect_problem(data) == "P4":
        return from_upstream_p4(data, source)
    return load_p4(from_mapping(data, source))


def load_p4(instance: str | Path | dict | P3Instance) -> P4Instance:
    """A P4 instance from a shipped name, a JSON path (ours or upstream's), a mapping or an
    object (a plain P3 instance becomes a P4 instance without disruptions)."""
    if isinstance(instance, P3Instance) and not isinstance(instance, P4Instance):
        return P4Instance(**{k: getattr(instance, k) for k in P3Instance.model_fields}, disruptions=[])
    return load_instance(instance, P4Instance, instance_dir=INSTANCE_DIR, problem="P4", from_mapping=_from_mapping)


def disruption_to_json(d: _Disruption) -> dict[str, Any]:
    """A disruption as a plain JSON-compatible dict."""
    return json.loads(d.model_dump_json())
