"""REALM-Bench P5 and P8, wedding logistics: the instance models.

| part | definition |
|---|---|
| decision | for each vehicle, an ordered route of stops: ``pickup:<guest>``, ``errand:<errand>``, ``dropoff:venue`` (everything on board is unloaded); after its last stop a vehicle drives to the venue and ends there |
| hard constraints | passengers on board <= the vehicle's seats; a guest is picked up only after landing (the vehicle waits); an errand's service starts no earlier than its shop opens and ends no later than it closes (the vehicle waits for the opening); every guest and every errand's goods are unloaded at the venue by ``photo_time``; every vehicle ends at the venue by ``deadline`` (a guest's own car by ``photo_time``, since its driver is in the photo) |
| objective | minimise total driving minutes (waiting and service are free) + ``unserved_penalty`` per guest or errand left undone (the oracle's price; a plan that leaves one undone is infeasible) |
| units | minutes; clock times are minutes from midnight |

A vehicle leaves a stop as soon as it has served it, so time moves by events. Travel between
two places is the shortest path over the roads (:mod:`crab_gym.envs.realm.wedding.network`).
P8 (:class:`P8Instance`) adds road disruptions that strike at given minutes
(:mod:`crab_gym.envs.realm.wedding.disruptions`).

Stop codes: guest ``g`` is ``g``, errand ``e`` is ``G + e``, the venue drop is ``G + E``.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.disruptions import InvalidDisruptionError
from crab_gym.envs.realm.common.errors import FieldProblem
from crab_gym.envs.realm.common.limits import Coordinate, NonNegInt, PosInt
from crab_gym.envs.realm.common.uniqueness import check_unique
from crab_gym.envs.realm.wedding.disruptions import Disruption, check_disruption_fits
from crab_gym.envs.realm.wedding.network import RoadNetwork

#: Folder of each problem's shipped instances and their ``references.json``.
INSTANCE_DIRS: dict[str, Path] = {p: Path(__file__).with_name("instances") / p for p in ("p5", "p8")}

#: Minutes charged per guest or errand left undone (more than any detour in our towns).
DEFAULT_UNSERVED_PENALTY = 1000

#: The stop that unloads everything on board at the venue.
VENUE_STOP = "dropoff:venue"


def _check_name(value: str, field: str) -> None:
    """Ids name stops (``pickup:<id>``) and vehicle ids name fields of ``submit_plan``."""
    if not value.isidentifier() or value.startswith(("_", "model_")):
        raise FieldProblem(
            field, f"id {value!r} is not a name: expected letters, digits and '_', not starting with a digit or '_'"
        )


class Guest(BaseModel):
    """A guest who needs a ride: lands at ``place`` at minute ``arrival``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    guest_id: str = Field(min_length=1)
    place: str
    arrival: NonNegInt = Field(description="minute the guest is ready to be picked up")

    @model_validator(mode="after")
    def _named(self) -> Guest:
        _check_name(self.guest_id, "guest_id")
        return self


class Errand(BaseModel):
    """An errand at a shop: ``service`` minutes inside the shop's opening hours."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    errand_id: str = Field(min_length=1)
    shop: str
    opens: NonNegInt
    closes: NonNegInt
    service: NonNegInt = 15

    @property
    def latest_start(self) -> int:
        """The last minute the service may start and still end by closing time."""
        return self.closes - self.service

    @model_validator(mode="after")
    def _window(self) -> Errand:
        _check_name(self.errand_id, "errand_id")
        if self.latest_start < self.opens:
            raise FieldProblem(
                "closes", f"the shop closes at minute {self.closes}, too early for {self.service} minutes of "
                f"service after it opens at {self.opens}"
            )
        return self


class Vehicle(BaseModel):
    """A vehicle: where it waits, from when, and how many passengers it seats besides its driver.

    ``driver`` names a guest who drives their own car: that guest reaches the venue when the
    car ends its route, so the car must end by the photo time.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    vehicle_id: str = Field(min_length=1)
    place: str
    capacity: PosInt
    available: NonNegInt = Field(description="minute the vehicle can leave")
    driver: str | None = None

    @model_validator(mode="after")
    def _named(self) -> Vehicle:
        _check_name(self.vehicle_id, "vehicle_id")
        return self


class WeddingInstance(BaseModel):
    """One wedding-logistics instance (P5; see the module docstring for the model)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    size: str | None = None
    places: list[str] = Field(min_length=2)
    labels: dict[str, str] = Field(default_factory=dict, description="place -> readable name (display only)")
    roads: list[list[NonNegInt | None]] = Field(description="roads[i][j]: minutes on the road i -> j (None: none)")
    coords: list[tuple[Coordinate, Coordinate]] | None = Field(default=None, description="map positions, drawing only")
    venue: str
    guests: list[Guest] = Field(default_factory=list)
    errands: list[Errand] = Field(default_factory=list)
    vehicles: list[Vehicle] = Field(min_length=1)
    photo_time: NonNegInt
    deadline: NonNegInt
    unserved_penalty: NonNegInt = DEFAULT_UNSERVED_PENALTY

    @model_validator(mode="after")
    def _consistent(self) -> WeddingInstance:
        n = len(self.places)
        check_unique(self.places, "places[{}]", "place")
        if len(self.roads) != n:
            raise FieldProblem("roads", f"expected a {n}x{n} matrix (one row per place), got {len(self.roads)} rows")
        for i, row in enumerate(self.roads):
            if len(row) != n:
                raise FieldProblem(f"roads[{i}]", f"expected {n} entries (one per place), got {len(row)}")
        if self.coords is not None and len(self.coords) != n:
            raise FieldProblem("coords", f"expected one position per place ({n}), got {len(self.coords)}")
        if not self.guests and not self.errands:
            raise FieldProblem("guests", "nothing to do: expected at least one guest or errand")
        ids = [g.guest_id for g in self.guests] + [e.errand_id for e in self.errands]
        check_unique(ids, "guests/errands[{}]", "guest or errand id", "ids must be unique")
        check_unique((v.vehicle_id for v in self.vehicles), "vehicles[{}].vehicle_id", "vehicle id", "ids must be unique")
        names = set(self.places)
        where = [("venue", self.venue)]
        where += [(f"guests[{k}].place", g.place) for k, g in enumerate(self.guests)]
        where += [(f"errands[{k}].shop", e.shop) for k, e in enumerate(self.errands)]
        where += [(f"vehicles[{k}].place", v.place) for k, v in enumerate(self.vehicles)]
        for field, place in where:
            if place not in names:
                raise FieldProblem(field, f"{place!r} is not one of the places")
        if self.deadline < self.photo_time:
            raise FieldProblem("deadline", f"minute {self.deadline} is before the photo time ({self.photo_time})")
        self._check_ready_by_deadline()
        if not self.network.connected():
            raise FieldProblem("roads", "some places cannot be reached from others over the roads")
        return self

    def _check_ready_by_deadline(self) -> None:
        """A guest lands, and a shop opens, by the deadline: after it nothing can be served,
        and the routing oracle's time horizon (the deadline plus a day) would not hold the
        stop (its solver failed at the end of the episode)."""
        ready = [(f"guests[{k}].arrival", g.arrival, "the guest lands") for k, g in enumerate(self.guests)]
        ready += [(f"errands[{k}].opens", e.opens, "the shop opens") for k, e in enumerate(self.errands)]
        for field, minute, what in ready:
            if minute > self.deadline:
                raise FieldProblem(field, f"{what} at minute {minute}, after the deadline (minute {self.deadline}), "
                                   "when every vehicle has ended at the venue")

    # -- conveniences -------------------------------------------------------------------
    @cached_property
    def network(self) -> RoadNetwork:
        """The roads as a network (shortest paths, disruption effects)."""
        return RoadNetwork(self.places, self.roads)

    @property
    def index(self) -> dict[str, int]:
        return self.network.index

    @property
    def travel(self) -> np.ndarray:
        """Undisrupted shortest-path minutes between places (read-only)."""
        return self.network.static

    @property
    def n_guests(self) -> int:
        return len(self.guests)

    @property
    def n_errands(self) -> int:
        return len(self.errands)

    @property
    def n_items(self) -> int:
        """Guests plus errands: what the plan must bring to the venue."""
        return len(self.guests) + len(self.errands)

    @property
    def venue_code(self) -> int:
        return self.n_items

    def stop_names(self) -> list[str]:
        """Stop labels in stop-code order: guests, errands, then the venue drop."""
        return (
            [f"pickup:{g.guest_id}" for g in self.guests]
            + [f"errand:{e.errand_id}" for e in self.errands]
            + [VENUE_STOP]
        )

    def stop_place(self, code: int) -> int:
        """Matrix row of a stop code."""
        if code < self.n_guests:
            return self.index[self.guests[code].place]
        if code < self.n_items:
            return self.index[self.errands[code - self.n_guests].shop]
        return self.index[self.venue]

    def end_by(self, v: int) -> int:
        """The minute vehicle ``v`` must have ended at the venue (a guest's car: the photo)."""
        return self.photo_time if self.vehicles[v].driver else self.deadline

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name or the drawing)."""
        core = self.model_dump(mode="json", exclude={"name", "description", "size", "coords", "labels"})
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def plain(self) -> WeddingInstance:
        """The P5 problem of this instance (P8: without its disruptions)."""
        if type(self) is WeddingInstance:
            return self
        return WeddingInstance.model_validate(self.model_dump(include=set(WeddingInstance.model_fields)))


class P8Instance(WeddingInstance):
    """A P5 instance plus its schedule of road disruptions (each with a start minute)."""

    disruptions: list[Disruption] = Field(default_factory=list)

    @model_validator(mode="after")
    def _disruptions_fit(self) -> P8Instance:
        for k, d in enumerate(self.disruptions):
            if d.start is None:
                raise FieldProblem(f"disruptions[{k}].start", "a scheduled disruption needs a start minute")
            try:
                check_disruption_fits(d, self.places, self.roads)
            except InvalidDisruptionError as exc:
                raise FieldProblem(f"disruptions[{k}]", str(exc)) from None
        return self

    @classmethod
    def from_p5(cls, instance: WeddingInstance) -> P8Instance:
        """A P5 instance as a P8 instance without disruptions."""
        return cls(**{k: getattr(instance, k) for k in WeddingInstance.model_fields}, disruptions=[])


def dump(instance: WeddingInstance) -> dict[str, Any]:
    """An instance as crab_gym's JSON mapping."""
    return json.loads(instance.model_dump_json(exclude_none=True))
