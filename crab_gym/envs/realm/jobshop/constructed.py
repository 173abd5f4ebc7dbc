"""Job-shop instances whose optimum is known by construction ("bound-tight" instances).

A schedule is laid out first and the instance is read from it, so that the makespan ``C*`` of
that schedule equals the instance's trivial lower bound (the busiest machine's load,
:meth:`~crab_gym.envs.realm.jobshop.model.JSSPInstance.trivial_lower_bound`): no schedule is
shorter than the bound, the laid-out one reaches it, so ``C*`` is the optimum and a fresh
instance's reference needs no solver.

The construction, step by step:

1. **A slot grid.** Time ``[0, C*]`` is cut into ``T`` slots of random lengths in
   ``low..high``. Every slot holds at most one operation per job and per machine. Classical
   shape (each job visits each machine once): ``T = jobs`` slots and one random perfect
   matching slots -> jobs per machine, each drawn among the (slot, job) pairs still free, which
   always exist (a regular bipartite graph has a perfect matching). Recirculating shape (J3:
   ``ops_per_job`` operations per job, a machine may come back): each slot takes the
   ``machines`` jobs with the most operations left (ties at random) and gives them the machines
   in a random order. Every machine busy in every slot has no idle time from 0 to ``C*``.
2. **Saturated machines.** ``saturated`` of those machines keep no idle time: their loads are
   ``C*``. The operations of every other machine shrink to a random part of the room around
   them (at least ``fill`` of it), so those machines are busy but idle at times.
3. **Jitter.** The boundary between two neighbouring operations of a saturated machine moves to
   a random time that keeps both jobs' other operations clear (and durations in
   ``low..high``); the shrunk operations then spread again into the room freed. Loads stay
   ``C*`` on saturated machines, and durations vary well beyond the slot lengths.
4. **Reading.** Each job's route is its operations in time order; the schedule's start times,
   checked by the family's own checker, are the certificate.

Limits, said plainly: every instance is **bound-tight** (optimum = machine-load bound), which
classical benchmarks often are not (ft10's optimum 930 is 61 above its bound 869; most of
Taillard's larger instances are load-bound, most small square ones are not), so these instances
test how well a policy packs bottleneck machines, not how it handles a gap between bound and
optimum. The grid shows: saturated machines run ``jobs`` (classical) or ``T`` operations
each, and in the classical shape every job visits the saturated machines in slot order, so a
job's operations on them are spread over the whole horizon. The classical shape needs at least
as many jobs as machines, and so does the recirculating one (a slot holds one operation per
machine, each of another job). Every job has the same number of operations (the family's
instance type asks for it; upstream J3 jobs have 10-15).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.jobshop.checker import constraint_satisfaction, plan_makespan
from crab_gym.envs.realm.jobshop.generator import SIZES
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.references import sequence_from_starts

#: The status of a reference proven optimal by construction (no solver ran).
STATUS = "OPTIMAL_BY_CONSTRUCTION"
#: What made the reference (``Reference.solver``).
SOLVER = "construction (crab_gym.envs.realm.jobshop.constructed)"
#: J3's shape (REALM-Bench's 200 jobs x 50 machines, recirculating, durations 1..100); upstream
#: jobs have 10-15 operations (2,334-2,660 per file), ours 12 each (2,400).
J3_SHAPE: dict[str, Any] = {"jobs": 200, "machines": 50, "recirculation": True, "ops_per_job": 12,
                            "low": 1, "high": 100}
#: Rounds of jitter and spreading (each round moves every boundary once).
ROUNDS = 3


@dataclass(frozen=True)
class ConstructionCertificate:
    """Why the optimum of a constructed instance is known.

    Attributes:
        makespan: ``C*``, the makespan of the laid-out schedule.
        lower_bound: the instance's trivial lower bound, computed from its data alone
            (``instance.trivial_lower_bound()``); equal to ``makespan``: the proof.
        starts: ``starts[j][k]``, the start of operation k of job j in the laid-out schedule.
        sequence: per machine the job order of that schedule (``submit_plan``'s argument).
        saturated: the machines with no idle time from 0 to ``makespan``.
        seed: the seed the instance was drawn with.
        fingerprint: the instance data's fingerprint.
    """

    makespan: int
    lower_bound: int
    starts: tuple[tuple[int, ...], ...]
    sequence: tuple[tuple[int, ...], ...]
    saturated: tuple[int, ...]
    seed: int
    fingerprint: str
    options: dict[str, Any] = field(default_factory=dict)

    def reference(self) -> Reference:
        """The instance's reference record: value = bound = ``C*``, the laid-out schedule as
        its plan (what ``OraclePolicy`` submits), status :data:`STATUS`; no solver ran."""
        return Reference(
            value=float(self.makespan),
            status=STATUS,
            bound=float(self.lower_bound),
            solver=SOLVER,
            plan={"sequence": [list(row) for row in self.sequence]},
            source="constructed",
            fingerprint=self.fingerprint,
            extra={"reference_kind": "optimum", "saturated_machines": list(self.saturated),
                   "seed": self.seed, **self.options},
        )


def constructed_instance(
    jobs: int,
    machines: int,
    *,
    seed: int,
    recirculation: bool = False,
    ops_per_job: int | None = None,
    saturated: int | None = None,
    low: int = 1,
    high: int = 99,
    fill: float = 0.5,
    name: str | None = None,
) -> tuple[JSSPInstance, ConstructionCertificate]:
    """A seeded instance whose optimal makespan is its trivial lower bound, with the proof.

    Args:
        jobs: number of jobs (at least ``machines``).
        machines: number of machines.
        seed: the seed (a whole number >= 0); the same arguments give the same instance.
        recirculation: False: classical shape, each job visits each machine once (P11).
            True: each job has ``ops_per_job`` operations on machines drawn freely, a machine
            may come back (J3).
        ops_per_job: operations per job (classical: ``machines``, the default; recirculating:
            default ``machines`` too; J3 uses 12, see :data:`J3_SHAPE`).
        saturated: machines with no idle time (default ``ceil(machines / 3)``).
        low: the shortest duration (>= 1).
        high: the longest duration.
        fill: the least share of its room an operation of an unsaturated machine fills.
        name: the instance's name (default ``constructed_<jobs>x<machines>[r]_<seed>``).

    Returns:
        The instance (the family's :class:`JSSPInstance`, with ``optimum``, ``lower_bound``
        and ``upper_bound`` set to ``C*``) and its :class:`ConstructionCertificate`.
    """
    k, n_sat = _checked(jobs, machines, seed, recirculation, ops_per_job, saturated, low, high, fill)
    rng = random.Random(seed)
    if recirculation:
        grid = _recirculating_grid(jobs, machines, k, rng)
    else:
        grid = _classical_grid(jobs, machines, rng)
    sched = _Schedule(jobs, machines, grid, [rng.randint(low, high) for _ in grid])
    full = [mc for mc in range(machines) if len(sched.mach_ops[mc]) == len(grid)]
    sat = sorted(rng.sample(full, min(n_sat, len(full))))
    free = [mc for mc in range(machines) if mc not in set(sat)]
    for _ in range(ROUNDS):
        sched.spread(free, fill, low, high, rng)
        sched.jitter(sat, low, high, rng)
    sched.spread(free, fill, low, high, rng)
    tag = "r" if recirculation else ""
    options = {"jobs": jobs, "machines": machines, "recirculation": recirculation, "ops_per_job": k,
               "saturated": len(sat), "low": low, "high": high, "fill": fill}
    return _certified(sched, sat, seed, name or f"constructed_{jobs}x{machines}{tag}_{seed}", options)


def constructed_p11(size: str = "small", seed: int = 0, **kwargs: Any) -> tuple[JSSPInstance, ConstructionCertificate]:
    """A classical (P11-shaped) constructed instance of a size class of
    :data:`~crab_gym.envs.realm.jobshop.generator.SIZES` (6x6, 10x10, 15x15)."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    jobs, machines = SIZES[size]
    return constructed_instance(jobs, machines, seed=seed, **kwargs)


def constructed_j3(seed: int = 0, **kwargs: Any) -> tuple[JSSPInstance, ConstructionCertificate]:
    """A J3-shaped constructed instance (:data:`J3_SHAPE`: 200 jobs x 50 machines,
    recirculating, 12 operations per job, durations 1..100); ``kwargs`` override the shape."""
    opts = {**J3_SHAPE, **kwargs}
    return constructed_instance(opts.pop("jobs"), opts.pop("machines"), seed=seed, **opts)


# ---------------------------------------------------------------------- checks
def _whole(value: Any, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{what} must be a whole number >= {low}, got {value!r}")
    return value


def _checked(jobs: Any, machines: Any, seed: Any, recirculation: bool, ops_per_job: Any,
             saturated: Any, low: Any, high: Any, fill: Any) -> tuple[int, int]:
    """The checked sizes: (operations per job, saturated machines wanted)."""
    _whole(jobs, "jobs", 1)
    _whole(machines, "machines", 1)
    _whole(seed, "seed", 0)
    _whole(low, "low", 1)
    _whole(high, "high", low)
    if jobs < machines:
        raise ValueError(
            f"a constructed instance needs at least as many jobs as machines, got {jobs} jobs and "
            f"{machines} machines (each time slot holds one operation per machine, each of another job)"
        )
    k = machines if ops_per_job is None else _whole(ops_per_job, "ops_per_job", 1)
    if not recirculation and k != machines:
        raise ValueError(
            f"ops_per_job={k}: in the classical shape each job visits each of the {machines} machines "
            "once; pass recirculation=True for another count"
        )
    n_sat = math.ceil(machines / 3) if saturated is None else _whole(saturated, "saturated", 1)
    if n_sat > machines:
        raise ValueError(f"saturated={n_sat} exceeds the {machines} machines")
    if isinstance(fill, bool) or not isinstance(fill, (int, float)) or not 0 < fill <= 1:
        raise ValueError(f"fill must be in (0, 1], got {fill!r}")
    return k, n_sat


# ---------------------------------------------------------------------- the slot grid
Grid = list[list[tuple[int, int]]]  # per slot, its (job, machine) pairs


def _classical_grid(jobs: int, machines: int, rng: random.Random) -> Grid:
    """``jobs`` slots; machine i's column is a random perfect matching slot -> job among the
    (slot, job) pairs no earlier machine took, so each job meets each machine once and is in a
    slot at most once."""
    free = [set(range(jobs)) for _ in range(jobs)]  # free[s]: jobs not yet busy in slot s
    grid: Grid = [[] for _ in range(jobs)]
    for mc in rng.sample(range(machines), machines):
        for s, j in enumerate(_perfect_matching(free, rng)):
            free[s].discard(j)
            grid[s].append((j, mc))
    return grid


def _perfect_matching(free: list[set[int]], rng: random.Random) -> list[int]:
    """A random perfect matching of slots to jobs along ``free`` (a regular bipartite graph:
    one exists): greedy at random, then augmenting paths found breadth first."""
    n = len(free)
    adj = [rng.sample(sorted(row), len(row)) for row in free]
    slot_of: list[int | None] = [None] * n  # job -> slot
    job_of: list[int | None] = [None] * n  # slot -> job
    for s in rng.sample(range(n), n):
        for j in adj[s]:
            if slot_of[j] is None:
                slot_of[j], job_of[s] = s, j
                break
    for s in range(n):
        if job_of[s] is None:
            _augment(s, adj, slot_of, job_of)
    return [int(j) for j in job_of]  # type: ignore[arg-type]


def _augment(root: int, adj: list[list[int]], slot_of: list, job_of: list) -> None:
    """Match slot ``root`` along a shortest augmenting path (one exists in a regular graph)."""
    came: dict[int, int] = {}  # job -> the slot it was reached from
    frontier = [root]
    while frontier:
        nxt = []
        for s in frontier:
            for j in adj[s]:
                if j in came:
                    continue
                came[j] = s
                if slot_of[j] is None:  # free job: flip the path back to the root
                    while True:
                        s_prev, j_prev = came[j], job_of[came[j]]
                        slot_of[j], job_of[s_prev] = s_prev, j
                        if s_prev == root:
                            return
                        j = j_prev
                nxt.append(slot_of[j])
        frontier = nxt
    raise RuntimeError("no augmenting path: the slot graph is not regular")


def _recirculating_grid(jobs: int, machines: int, k: int, rng: random.Random) -> Grid:
    """``ceil(jobs * k / machines)`` slots, each taking the jobs with most operations left
    (ties at random; this never puts a job twice in a slot or leaves one short) and handing
    them the machines in a random order (the last slot may be partial)."""
    left = [k] * jobs
    total = jobs * k
    grid: Grid = []
    while total:
        width = min(machines, total)
        order = sorted(range(jobs), key=lambda j: (-left[j], rng.random()))[:width]
        if left[order[-1]] == 0:
            raise RuntimeError("slot grid: a job would run twice in a slot")
        for j in order:
            left[j] -= 1
        grid.append(list(zip(order, rng.sample(range(machines), width))))
        total -= width
    return grid


# ---------------------------------------------------------------------- the schedule
class _Schedule:
    """Operations with start and end times, in time order per job and per machine."""

    def __init__(self, jobs: int, machines: int, grid: Grid, lengths: list[int]) -> None:
        self.job: list[int] = []
        self.mach: list[int] = []
        self.start: list[int] = []
        self.end: list[int] = []
        self.job_ops: list[list[int]] = [[] for _ in range(jobs)]
        self.mach_ops: list[list[int]] = [[] for _ in range(machines)]
        t = 0
        for pairs, length in zip(grid, lengths):
            for j, mc in pairs:
                o = len(self.job)
                self.job.append(j)
                self.mach.append(mc)
                self.start.append(t)
                self.end.append(t + length)
                self.job_ops[j].append(o)
                self.mach_ops[mc].append(o)
            t += length
        self.horizon = t
        self.jpos = [0] * len(self.job)
        for row in self.job_ops:
            for p, o in enumerate(row):
                self.jpos[o] = p

    def _job_prev_end(self, o: int) -> int:
        p = self.jpos[o]
        return self.end[self.job_ops[self.job[o]][p - 1]] if p else 0

    def _job_next_start(self, o: int) -> int:
        row, p = self.job_ops[self.job[o]], self.jpos[o]
        return self.start[row[p + 1]] if p + 1 < len(row) else self.horizon

    def spread(self, machines: Sequence[int], fill: float, low: int, high: int, rng: random.Random) -> None:
        """Place each operation of ``machines`` at random in the room its job and machine
        neighbours leave it, filling at least ``fill`` of that room (durations in low..high)."""
        for mc in machines:
            row = self.mach_ops[mc]
            for i, o in enumerate(row):
                lo = max(self._job_prev_end(o), self.end[row[i - 1]] if i else 0)
                hi = min(self._job_next_start(o), self.start[row[i + 1]] if i + 1 < len(row) else self.horizon)
                longest = min(high, hi - lo)
                length = rng.randint(min(longest, max(low, math.ceil(fill * (hi - lo)))), longest)
                self.start[o] = rng.randint(lo, hi - length)
                self.end[o] = self.start[o] + length

    def jitter(self, machines: Sequence[int], low: int, high: int, rng: random.Random) -> None:
        """Move each boundary between neighbouring operations of ``machines`` (which have no
        idle time) to a random time that keeps both jobs' other operations clear."""
        for mc in machines:
            row = self.mach_ops[mc]
            for i in rng.sample(range(len(row) - 1), len(row) - 1):
                a, b = row[i], row[i + 1]
                lo = max(self.start[a] + low, self.end[b] - high)
                hi = min(self.end[b] - low, self.start[a] + high)
                if self.job[a] != self.job[b]:  # same job: the boundary is its own hand-over
                    lo = max(lo, self._job_prev_end(b))
                    hi = min(hi, self._job_next_start(a))
                if lo <= hi:
                    self.end[a] = self.start[b] = rng.randint(lo, hi)


def _certified(sched: _Schedule, sat: list[int], seed: int, name: str,
               options: dict[str, Any]) -> tuple[JSSPInstance, ConstructionCertificate]:
    """The instance read from the schedule, and the certificate once the family's checker and
    bound confirm it (a failure here is a bug of the construction, never returned)."""
    rows = [[(sched.mach[o], sched.end[o] - sched.start[o]) for o in ops] for ops in sched.job_ops]
    machines = [[mc for mc, _ in row] for row in rows]
    durations = [[p for _, p in row] for row in rows]
    starts = [[sched.start[o] for o in ops] for ops in sched.job_ops]
    n_machines = len(sched.mach_ops)
    bare = JSSPInstance(durations=durations, machines=machines, name=name, n_machines=n_machines)
    bound, c_star = bare.trivial_lower_bound(), sched.horizon
    sequence = sequence_from_starts(bare, starts)
    if bound != c_star or constraint_satisfaction(bare, starts) != 1.0 or plan_makespan(bare, sequence) != c_star:
        raise RuntimeError(f"construction failed its own proof for {name} (bound {bound}, makespan {c_star})")
    instance = JSSPInstance(
        durations=bare.durations, machines=bare.machines, name=name, n_machines=n_machines,
        optimum=c_star, lower_bound=bound, upper_bound=c_star,
        citation=f"bound-tight by construction (crab_gym.envs.realm.jobshop.constructed, seed {seed})",
    )
    certificate = ConstructionCertificate(
        makespan=c_star, lower_bound=bound, starts=tuple(map(tuple, starts)),
        sequence=tuple(map(tuple, sequence)), saturated=tuple(sat), seed=seed,
        fingerprint=instance.fingerprint(), options=options,
    )
    return instance, certificate
