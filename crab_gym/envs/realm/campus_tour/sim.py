"""The P1 walk as a state machine: where the visitor is, the clock, what is visited on time.

Written apart from :mod:`.checker`, which scores a whole route on its own, so the env's
metrics and the checker's can be compared in the tests.
"""

from __future__ import annotations

import math

import numpy as np

from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.common.env import hhmm


def shortest_paths(travel: np.ndarray) -> np.ndarray:
    """All-pairs shortest walking times (Floyd-Warshall): a lower bound on any continuation."""
    dist = travel.astype(np.int64).copy()
    for k in range(dist.shape[0]):
        dist = np.minimum(dist, dist[:, k : k + 1] + dist[k : k + 1, :])
    return dist


class Tour:
    """The walk so far: position, clock, travel and the arrival at every stop.

    The env's state: :meth:`why_not` is its action mask (with a shortest-path look-ahead),
    :meth:`move` its dynamics; the policies and renders read it.
    """

    def __init__(self, inst: P1Instance) -> None:
        self.inst = inst
        self.travel = np.asarray(inst.travel, dtype=np.int64)
        self.sp = shortest_paths(self.travel)
        self.open = np.array([w[0] for w in inst.windows], dtype=np.int64)
        self.close = np.array([w[1] for w in inst.windows], dtype=np.int64)
        self.s, self.e = inst.index[inst.start], inst.index[inst.end]
        self.budget = inst.max_travel if inst.max_travel is not None else math.inf
        self.target_mask = np.ones(inst.n, dtype=bool)
        self.target_mask[[self.s, self.e]] = False
        self.reset()

    def reset(self) -> None:
        self.pos = self.s
        self.clock = int(self.inst.departure)
        self.walked = 0
        self.route = [self.s]
        self.arrivals = [self.clock]
        self.starts = [self.clock]
        self.visited = np.zeros(self.inst.n, dtype=bool)
        self.visited[self.s] = True
        self.on_time = np.zeros(self.inst.n, dtype=bool)
        self.done = False

    def why_not(self, j: int) -> str | None:
        """Why walking to ``j`` now is masked (None: allowed)."""
        name = self.inst.locations[j]
        if j == self.e:
            return None
        if self.visited[j]:
            return f"{name} was already visited"
        arrive = self.clock + int(self.travel[self.pos, j])
        if arrive > self.close[j]:
            return f"you would arrive at {name} at {hhmm(arrive)}, after it closes at {hhmm(self.close[j])}"
        begin = max(arrive, int(self.open[j]))
        if begin + self.sp[j, self.e] > self.close[self.e]:
            return f"after {name} the tour could not reach {self.inst.end} before it closes"
        if self.walked + self.travel[self.pos, j] + self.sp[j, self.e] > self.budget:
            return f"via {name} the tour would exceed the travel budget of {self.inst.max_travel} minutes"
        return None

    def move(self, j: int) -> None:
        """Walk to ``j`` (no checks: a submitted plan may break windows and is scored)."""
        leg = int(self.travel[self.pos, j])
        arrive = self.clock + leg
        self.walked += leg
        begin = arrive if j == self.e else max(arrive, int(self.open[j]))
        if not self.visited[j] or j == self.e:
            self.on_time[j] = arrive <= self.close[j]
        self.visited[j] = True
        self.pos, self.clock = j, begin
        self.route.append(j)
        self.arrivals.append(arrive)
        self.starts.append(begin)
        if j == self.e:
            self.done = True

    @property
    def targets_on_time(self) -> int:
        return int((self.on_time & self.target_mask).sum())

    @property
    def feasible(self) -> bool:
        n_targets = int(self.target_mask.sum())
        return (
            self.done
            and self.targets_on_time == n_targets
            and bool(self.on_time[self.e])
            and self.walked <= self.budget
        )
