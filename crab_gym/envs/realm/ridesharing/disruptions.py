"""The disruptions of P4 (ride-sharing with disruptions): typed models, parsing, checks.

Each disruption is a pydantic model with a ``type`` tag:

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
clear error (:class:`~crab_gym.envs.realm.common.disruptions.InvalidDisruptionError`).

These are the ride-sharing side of the disruption protocol of
:mod:`crab_gym.envs.realm.common.disruptions` (:data:`DISRUPTION_KINDS`, :func:`parse_disruption`);
how they change travel times is :mod:`crab_gym.envs.realm.ridesharing.network`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from crab_gym.envs.realm.common.disruptions import DisruptionKind, InvalidDisruptionError
from crab_gym.envs.realm.common.distances import split_pair
from crab_gym.envs.realm.common.limits import NonNegInt

__all__ = [
    "DISRUPTION_KINDS",
    "DISRUPTION_TYPES",
    "Accident",
    "Construction",
    "Disruption",
    "InvalidDisruptionError",
    "RoadClosure",
    "TrafficDelay",
    "check_disruption_fits",
    "disruption_to_json",
    "parse_disruption",
]

#: The P4 disruption types, in the order the generators and the random process draw them.
DISRUPTION_KINDS: dict[str, DisruptionKind] = {
    "traffic_delay": DisruptionKind("route"),
    "road_closure": DisruptionKind("route", has_delay=False),
    "accident": DisruptionKind("location"),
    "construction": DisruptionKind("route"),
}
DISRUPTION_TYPES = tuple(DISRUPTION_KINDS)


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
        pair = split_pair(self.route, names)  # type: ignore[attr-defined]
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
#: Validates a mapping into the right :data:`Disruption` model (by its ``type``).
DISRUPTION_ADAPTER: TypeAdapter = TypeAdapter(Disruption)


def check_disruption_fits(d: _Disruption, locations: Sequence[str], roads: Sequence[Sequence[int | None]]) -> None:
    """Raise :class:`InvalidDisruptionError` if ``d`` names a road or place not in the instance."""
    if isinstance(d, Accident):
        if d.location not in locations:
            raise InvalidDisruptionError(
                f"accident: unknown location {d.location!r}; known: {', '.join(locations)}"
            )
        return
    pair = split_pair(d.route, locations)  # type: ignore[attr-defined]
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


def parse_disruption(data: Any, instance: Any = None) -> _Disruption:
    """A typed disruption from a mapping (or a model), checked against ``instance`` (anything
    with ``locations`` and ``roads``, e.g. a P3/P4 instance) if given.

    Raises :class:`InvalidDisruptionError` with a readable message for an unknown type, a
    negative duration or delay, or a road/place the instance lacks.
    """
    if isinstance(data, _Disruption):
        d = data
    else:
        try:
            d = DISRUPTION_ADAPTER.validate_python(data)
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


def disruption_to_json(d: _Disruption) -> dict[str, Any]:
    """A disruption as a plain JSON-compatible dict."""
    return json.loads(d.model_dump_json())
