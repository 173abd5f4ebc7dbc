"""The road network of P3/P4: shortest-path travel times, and how disruptions change them.

Why shortest paths: upstream REALM-Bench gives one number per ordered pair of places, and
those numbers break the triangle inequality (going ``a -> c -> b`` can be quicker than the
listed ``a -> b``). A driver may always pass through a place without stopping, so the travel
time between two places is the shortest path over the listed roads. Road closures then have
a natural meaning too: traffic takes the next best way round.

Disruptions act on *roads* (the listed pairs) and only while active (``start <= t < end``):

* ``traffic_delay`` and ``construction`` add ``delay`` minutes to the road ``a-b`` (both
  directions);
* ``accident`` adds ``delay`` minutes to every road that touches its location;
* ``road_closure``: the road can be used only after it reopens, so a trip that departs at
  ``t`` pays the remaining closure time ``end - t`` on top of the road's time (traffic goes
  round when that is quicker, and a place never becomes unreachable).

A trip's time is fixed by the network *at its departure* (a snapshot): a disruption affects
the trips that depart while it is active, never a trip already on the road.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from crab_gym.envs.realm.common.fleet.roads import FleetRoads, in_force
from crab_gym.envs.realm.common.road_network import NO_ROAD


class DisruptionLike(Protocol):
    """What the network needs from a disruption (see :mod:`crab_gym.envs.realm.ridesharing.disruptions`)."""

    type: str
    start: int | None
    duration: int

    def roads(self, index: dict[str, int], names: Sequence[str]) -> list[tuple[int, int]]: ...

    def added_minutes(self, at: int) -> int: ...


class RoadNetwork(FleetRoads):
    """Travel times between the places of one instance, with and without disruptions.

    Args:
        locations: place names (matrix order).
        roads: ``roads[i][j]`` minutes on the direct road ``i -> j``, or None for no road.
    """

    def __init__(self, locations: Sequence[str], roads: Sequence[Sequence[int | None]]) -> None:
        super().__init__(locations, roads)
        self.locations = self.names
        self.has_road = self.base < NO_ROAD
        np.fill_diagonal(self.has_road, False)

    def add_delays(self, weights: np.ndarray, active: Sequence[DisruptionLike], at: int) -> None:
        """A disruption adds its minutes to each road it names (a road that exists)."""
        for d in active:
            extra = int(d.added_minutes(at))
            if extra <= 0:
                continue
            for i, j in d.roads(self.index, self.locations):
                if self.has_road[i, j]:
                    weights[i, j] += extra

    def weights_at(self, active: Sequence[DisruptionLike], at: int) -> np.ndarray:
        """Road minutes in force for a trip departing at ``at`` (before shortest paths)."""
        w = self.base.copy()
        self.add_delays(w, active, at)
        return w

    def matrix_at(self, active: Sequence[DisruptionLike], at: int) -> np.ndarray:
        """Shortest-path minutes for trips departing at ``at`` under the ``active`` disruptions.

        Read-only: the returned array is shared by a cache.
        """
        return self.disrupted(active, at)


def active_at(disruptions: Iterable[DisruptionLike], t: int) -> tuple[DisruptionLike, ...]:
    """The disruptions in force at minute ``t`` (``start <= t < start + duration``)."""
    return in_force(disruptions, t)
