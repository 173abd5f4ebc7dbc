"""The disruptions of P8 (wedding logistics with disruptions): typed models, parsing, checks.

=================  ===============  ==========================================================
type               where            effect while active (``start <= t < start + duration``)
=================  ===============  ==========================================================
``road_closure``   ``route`` "a-b"  the road reopens at the end: a trip departing at ``t``
                                    pays ``end - t`` more on it (or goes round)
``traffic_delay``  ``route`` "a-b"  ``delay`` minutes more on the road
=================  ===============  ==========================================================

Roads are two-way: a disruption on ``a-b`` strikes both directions. ``start`` is a minute from
midnight (``None``: now, when a wrapper injects one); ``duration`` and ``delay`` are minutes.
These are the wedding side of the protocol of :mod:`crab_gym.envs.realm.common.disruptions`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from crab_gym.envs.realm.common.disruptions import DisruptionKind, InvalidDisruptionError
from crab_gym.envs.realm.common.distances import split_pair
from crab_gym.envs.realm.common.limits import NonNegInt

#: The P8 disruption types, in the order the generator and the random process draw them.
DISRUPTION_KINDS: dict[str, DisruptionKind] = {
    "road_closure": DisruptionKind("route", has_delay=False),
    "traffic_delay": DisruptionKind("route"),
}
DISRUPTION_TYPES = tuple(DISRUPTION_KINDS)


class _RoadDisruption(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    route: str = Field(min_length=3, description='road "a-b"')
    start: NonNegInt | None = Field(default=None, description="minute from midnight; None = now")
    duration: NonNegInt = Field(description="minutes")

    @property
    def end(self) -> int | None:
        return None if self.start is None else self.start + self.duration

    def added_minutes(self, at: int) -> int:
        """Extra minutes on the road for a trip departing at ``at`` (while active)."""
        return int(getattr(self, "delay", 0))

    def pair(self, places: Sequence[str]) -> tuple[int, int] | None:
        """The road's two places as matrix rows (None: not a road of ``places``)."""
        found = split_pair(self.route, places)
        if found is None:
            return None
        return list(places).index(found[0]), list(places).index(found[1])

    def active(self, t: int) -> bool:
        return self.start is not None and self.start <= t < self.start + self.duration

    def describe(self) -> str:
        when = "now" if self.start is None else f"{self.start // 60:02d}:{self.start % 60:02d}"
        extra = f", +{self.delay} min" if hasattr(self, "delay") else ""
        return f"{self.type} on {self.route} from {when} for {self.duration} min{extra}"  # type: ignore[attr-defined]

    def with_start(self, start: int) -> _RoadDisruption:
        """The same disruption starting at ``start`` and ending when it would have ended."""
        end = self.end if self.end is not None else start + self.duration
        return self.model_copy(update={"start": int(start), "duration": max(0, int(end) - int(start))})


class RoadClosure(_RoadDisruption):
    """A closed road: usable again at the end of the closure."""

    type: Literal["road_closure"] = "road_closure"

    def added_minutes(self, at: int) -> int:
        return max(0, int(self.end) - int(at)) if self.end is not None else 0


class TrafficDelay(_RoadDisruption):
    """Heavy traffic on a road: ``delay`` more minutes."""

    type: Literal["traffic_delay"] = "traffic_delay"
    delay: NonNegInt = Field(description="extra minutes")


Disruption = Annotated[RoadClosure | TrafficDelay, Field(discriminator="type")]
#: Validates a mapping into the right :data:`Disruption` model (by its ``type``).
DISRUPTION_ADAPTER: TypeAdapter = TypeAdapter(Disruption)


def check_disruption_fits(d: _RoadDisruption, places: Sequence[str], roads: Sequence[Sequence[int | None]]) -> None:
    """Raise :class:`InvalidDisruptionError` if ``d`` names a road the instance lacks."""
    pair = d.pair(places)
    if pair is None:
        raise InvalidDisruptionError(
            f"{d.type}: unknown route {d.route!r}; a route is 'a-b' with a and b among: {', '.join(places)}"  # type: ignore[attr-defined]
        )
    i, j = pair
    if roads[i][j] is None and roads[j][i] is None:
        raise InvalidDisruptionError(f"{d.type}: no road joins {places[i]} and {places[j]}")  # type: ignore[attr-defined]


def parse_disruption(data: Any, instance: Any = None) -> _RoadDisruption:
    """A typed disruption from a mapping (or a model), checked against ``instance`` if given.

    Raises :class:`InvalidDisruptionError` for an unknown type, a negative duration or delay,
    or a road the instance lacks.
    """
    if isinstance(data, _RoadDisruption):
        d = data
    else:
        try:
            d = DISRUPTION_ADAPTER.validate_python(data)
        except ValidationError as exc:
            problems = [
                ".".join(str(p) for p in err.get("loc", ())) + f": {err.get('msg')}" for err in exc.errors()
            ]
            raise InvalidDisruptionError(
                f"invalid disruption {data!r}: " + "; ".join(problems) + f" (types: {', '.join(DISRUPTION_TYPES)})"
            ) from None
    if instance is not None:
        check_disruption_fits(d, instance.places, instance.roads)
    return d


def disruption_to_json(d: _RoadDisruption) -> dict[str, Any]:
    """A disruption as a plain JSON-compatible dict."""
    return json.loads(d.model_dump_json())
