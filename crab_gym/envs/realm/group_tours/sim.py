"""The P2 schedule as a state machine: which guide leads which group, and when.

Written apart from :mod:`.checker`, which scores a whole plan on its own, so the env's
metrics and the checker's can be compared in the tests.
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.realm.group_tours.model import P2Instance


class Schedule:
    """Who leads which group when: the env's state, its mask (:meth:`why_not`) and its
    dynamics (:meth:`assign`), and the score of the tours so far."""

    def __init__(self, inst: P2Instance) -> None:
        self.inst = inst
        self.G, self.K, self.D = len(inst.groups), len(inst.guides), inst.tour_duration
        self.compatible = np.array(
            [[inst.compatible(g, k) for k in range(self.K)] for g in range(self.G)], dtype=bool
        )
        self.reset()

    def reset(self) -> None:
        self.guide_of = np.full(self.G, -1, dtype=np.int64)
        self.start = np.full(self.G, -1, dtype=np.int64)
        self.tours: list[list[tuple[int, int]]] = [[] for _ in range(self.K)]  # (start, group)

    def earliest(self, g: int, k: int) -> int | None:
        """First minute >= arrival and >= the guide's start where a whole tour fits."""
        gd, D = self.inst.guides[k], self.D
        s = max(self.inst.groups[g].arrival, gd.available_from)
        for a, _ in self.tours[k]:
            if s + D <= a:
                break
            if s < a + D:
                s = a + D
        return s if s + D <= gd.available_to else None

    def why_not(self, g: int, k: int) -> str | None:
        grp, gd = self.inst.groups[g], self.inst.guides[k]
        if self.guide_of[g] >= 0:
            return f"{grp.group_id} already has a guide"
        if grp.size > gd.max_group_size:
            return f"{grp.group_id} ({grp.size} people) is larger than {gd.guide_id}'s cap {gd.max_group_size}"
        if grp.size > self.inst.max_group_size:
            return f"{grp.group_id} ({grp.size} people) is larger than the campus cap {self.inst.max_group_size}"
        if self.earliest(g, k) is None:
            return f"{gd.guide_id} has no free {self.D}-minute slot for {grp.group_id} in their availability"
        return None

    def assign(self, g: int, k: int, start: int) -> None:
        self.guide_of[g], self.start[g] = k, start
        self.tours[k].append((int(start), g))
        self.tours[k].sort()

    def plan(self) -> dict:
        """The tours so far in REALM's shape ``{"assignments": {guide: [{"group", "start"}]}}``."""
        ids = self.inst.group_ids
        return {
            "assignments": {
                gid: [{"group": ids[g], "start": int(a)} for a, g in self.tours[k]]
                for k, gid in enumerate(self.inst.guide_ids)
            }
        }

    # -- scoring from the schedule itself ----------------------------------------------
    def group_ok(self, g: int) -> bool:
        k = int(self.guide_of[g])
        if k < 0:
            return False
        grp, gd, s = self.inst.groups[g], self.inst.guides[k], int(self.start[g])
        return (
            s >= grp.arrival
            and grp.size <= min(gd.max_group_size, self.inst.max_group_size)
            and gd.available_from <= s
            and s + self.D <= gd.available_to
        )

    def guide_clean(self, k: int) -> bool:
        starts = [a for a, _ in self.tours[k]]
        return all(b - a >= self.D for a, b in zip(starts, starts[1:]))

    @property
    def waiting(self) -> int:
        return int(
            sum(
                max(0, int(self.start[g]) - self.inst.groups[g].preferred)
                for g in range(self.G)
                if self.guide_of[g] >= 0
            )
        )

    @property
    def imbalance(self) -> int:
        loads = [len(t) for t in self.tours]
        return max(loads) - min(loads)

    @property
    def cost(self) -> int:
        return self.waiting + self.inst.balance_weight * self.imbalance

    @property
    def feasible(self) -> bool:
        return all(self.group_ok(g) for g in range(self.G)) and all(self.guide_clean(k) for k in range(self.K))
