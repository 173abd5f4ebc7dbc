"""The road network of a vehicle fleet: shortest-path travel minutes, and the minutes in force
while disruptions strike.

A trip's time is fixed at its departure: the shortest path over the roads with every
disruption active at that minute added on (a family says which roads a disruption strikes
and by how much, :meth:`FleetRoads.add_delays`). A trip already on the road is not affected.
Disrupted matrices are cached, keyed by the active disruptions (and the minute, when a road
closure makes the minutes depend on it), because an episode asks for the same few again and
again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import is_
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.road_network import NO_ROAD, road_matrix, shortest_paths

#: Disrupted matrices kept per network before the cache starts afresh.
CACHE_SIZE = 4096


def same_items(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """The same objects (by identity), in the same order: a cheap key check for memos of
    frozen models, which compare field by field."""
    return len(a) == len(b) and all(map(is_, a, b))


def in_force(disruptions: Iterable[Any], t: int) -> tuple[Any, ...]:
    """The disruptions in force at minute ``t`` (``start <= t < start + duration``)."""
    return tuple([d for d in disruptions if d.start is not None and d.start <= t < d.start + d.duration])


class FleetRoads:
    """Travel minutes between the places of one instance, with and without disruptions.

    Args:
        names: place names (matrix order).
        roads: ``roads[i][j]`` minutes on the direct road ``i -> j``, or None for no road.
    """

    def __init__(self, names: Sequence[str], roads: Sequence[Sequence[int | None]]) -> None:
        self.names = list(names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.base = road_matrix(roads)
        self.static = shortest_paths(self.base)
        self._cache: dict[Any, np.ndarray] = {}
        #: The last lookup, ``(active, minute key, matrix)``: asked again and again within a
        #: step, it skips hashing the disruptions.
        self._last: tuple[tuple[Any, ...], int | None, np.ndarray] | None = None
        self._rows: dict[int, tuple[np.ndarray, list[list[int]]]] = {}

    def rows(self, m: np.ndarray) -> list[list[int]]:
        """Matrix ``m`` (one this network handed out) as lists of ints, made once per matrix:
        the masks' feasibility checks read single entries, which lists serve faster."""
        hit = self._rows.get(id(m))
        if hit is None or hit[0] is not m:
            if len(self._rows) > CACHE_SIZE:
                self._rows.clear()
            hit = self._rows[id(m)] = (m, m.tolist())
        return hit[1]

    @property
    def n(self) -> int:
        return len(self.names)

    def connected(self) -> bool:
        """Every place reachable from every other one."""
        return bool((self.static < NO_ROAD).all())

    def road_pairs(self) -> list[tuple[int, int]]:
        """Every road as ``(i, j)`` with ``i < j`` (either direction listed)."""
        n, base = self.n, self.base
        return [(i, j) for i in range(n) for j in range(i + 1, n) if base[i, j] < NO_ROAD or base[j, i] < NO_ROAD]

    def add_delays(self, weights: np.ndarray, active: Sequence[Any], at: int) -> None:
        """Add, in place, the minutes the ``active`` disruptions put on the direct roads for a
        trip departing at ``at`` (a family's disruptions decide which roads)."""
        raise NotImplementedError

    def disrupted(self, active: Sequence[Any], at: int) -> np.ndarray:
        """Shortest-path minutes for a trip departing at ``at`` under the ``active``
        disruptions (all in force then). Read-only: the array is shared by a cache."""
        if not active:
            return self.static
        active = tuple(active)
        last = self._last
        if last is not None and same_items(last[0], active) and (last[1] is None or last[1] == int(at)):
            return last[2]
        depends_on_time = any(d.type == "road_closure" for d in active)
        key = (active, int(at) if depends_on_time else None)
        hit = self._cache.get(key)
        if hit is None:
            if len(self._cache) > CACHE_SIZE:
                self._cache.clear()
            weights = self.base.copy()
            self.add_delays(weights, active, at)
            hit = shortest_paths(weights)
            hit.setflags(write=False)
            self._cache[key] = hit
        self._last = (*key, hit)
        return hit
