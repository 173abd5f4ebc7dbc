"""The roads of a wedding town: shortest-path travel minutes, with and without disruptions.

A trip's time is fixed at its departure: the shortest path over the roads with every
disruption active at that minute (a closure adds the minutes until it reopens, so traffic
goes round when that is quicker). A trip already on the road is not affected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.fleet.roads import FleetRoads, in_force
from crab_gym.envs.realm.common.road_network import NO_ROAD


def active_at(disruptions: Iterable[Any], t: int) -> tuple[Any, ...]:
    """The disruptions in force at minute ``t`` (those whose ``active(t)`` holds: the fleet
    kit's :func:`~crab_gym.envs.realm.common.fleet.roads.in_force`, the same rule without a
    method call per disruption, since every trip asks)."""
    return in_force(disruptions, t)


class RoadNetwork(FleetRoads):
    """Travel minutes between the places of one instance (roads two-way or one-way as given)."""

    def __init__(self, places: Sequence[str], roads: Sequence[Sequence[int | None]]) -> None:
        super().__init__(places, roads)
        self.places = self.names
        self.static.setflags(write=False)

    def roads(self) -> list[tuple[int, int]]:
        """Every road as ``(i, j)`` with ``i < j`` (either direction listed)."""
        return self.road_pairs()

    def add_delays(self, weights: np.ndarray, active: Sequence[Any], at: int) -> None:
        """A disruption adds its minutes to both directions of its road (where a road runs)."""
        for d in active:
            extra = int(d.added_minutes(at))
            pair = d.pair(self.places)
            if extra <= 0 or pair is None:
                continue
            i, j = pair
            for a, b in ((i, j), (j, i)):
                if weights[a, b] < NO_ROAD:
                    weights[a, b] += extra

    def matrix_at(self, disruptions: Sequence[Any], at: int) -> np.ndarray:
        """Shortest-path minutes for a trip departing at ``at`` given the disruptions applied
        so far (only those active at ``at`` count). Read-only: shared by a cache."""
        return self.disrupted(active_at(disruptions, at), at)
