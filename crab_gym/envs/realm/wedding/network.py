"""The roads of a wedding town: shortest-path travel minutes, with and without disruptions.

A trip's time is fixed at its departure: the shortest path over the roads with every
disruption active at that minute (a closure adds the minutes until it reopens, so traffic
goes round when that is quicker). A trip already on the road is not affected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.road_network import NO_ROAD, road_matrix, shortest_paths


def active_at(disruptions: Iterable[Any], t: int) -> tuple[Any, ...]:
    """The disruptions in force at minute ``t``."""
    return tuple(d for d in disruptions if d.active(t))


class RoadNetwork:
    """Travel minutes between the places of one instance (roads two-way or one-way as given)."""

    def __init__(self, places: Sequence[str], roads: Sequence[Sequence[int | None]]) -> None:
        self.places = list(places)
        self.index = {name: i for i, name in enumerate(self.places)}
        base = road_matrix(roads)
        self.base = base
        self.static = shortest_paths(base)
        self.static.setflags(write=False)
        self._cache: dict[Any, np.ndarray] = {}

    def connected(self) -> bool:
        return bool((self.static < NO_ROAD).all())

    def roads(self) -> list[tuple[int, int]]:
        """Every road as ``(i, j)`` with ``i < j`` (either direction listed)."""
        n = len(self.places)
        return [(i, j) for i in range(n) for j in range(i + 1, n) if self.base[i, j] < NO_ROAD or self.base[j, i] < NO_ROAD]

    def matrix_at(self, disruptions: Sequence[Any], at: int) -> np.ndarray:
        """Shortest-path minutes for a trip departing at ``at`` given the disruptions applied
        so far (only those active at ``at`` count). Read-only: shared by a cache."""
        active = active_at(disruptions, at)
        if not active:
            return self.static
        timed = any(d.type == "road_closure" for d in active)
        key = (active, int(at) if timed else None)
        hit = self._cache.get(key)
        if hit is None:
            if len(self._cache) > 4096:
                self._cache.clear()
            w = self.base.copy()
            for d in active:
                extra = int(d.added_minutes(at))
                pair = d.pair(self.places)
                if extra <= 0 or pair is None:
                    continue
                i, j = pair
                for a, b in ((i, j), (j, i)):
                    if w[a, b] < NO_ROAD:
                        w[a, b] += extra
            hit = shortest_paths(w)
            hit.setflags(write=False)
            self._cache[key] = hit
        return hit
