"""Job-shop instances whose optimum is known by construction ("bound-tight" instances).

A schedule is laid out first and the instance is read from it, so that the makespan ``C*`` of
that schedule equals the instance's trivial lower bound (the busiest machine's load,
:meth:`~crab_gym.envs.realm.jobshop.model.JSSPInstance.trivial_lower_bound`): no schedule is
shorter than the bound, the laid-out one reaches it, so ``C*`` is the optimum and a fresh
instance's reference needs no solver.

The construction, step by step:

1. **A slot grid.** Time ``[0, C*]`` is cut into slots of random lengths. *Classical shape*
   (each job visits each machine once; P11): ``jobs`` slots; each saturated machine runs one
   job per slot, a random perfect matching slots -> jobs among the (slot, job) pairs still
   free, so every job meets it once and it never idles; every other machine runs each job in
   one half of a slot where the job is free (another random matching; Hall's condition
   guarantees it exists), so jobs do not advance in step. *Recirculating shape* (J3:
   ``ops_per_job`` operations per job, a machine may come back): each slot runs ``machines``
   distinct jobs, drawn at random weighted by the operations they have left (kept only if the
   rest still fits, by the Gale-Ryser condition), on the machines in a random order; the
   saturated machines are drawn among those busy in every slot.
2. **Spread.** Each operation of an unsaturated machine takes a random part (at least
   ``fill``) of the room its job and machine neighbours leave it: busy machines that idle at
   times.
3. **Jitter.** The boundary between two neighbouring operations of a saturated machine moves to
   a random time that keeps both jobs' other operations clear (durations stay in
   ``low..high``); the spread runs again into the room freed (three rounds). Saturated loads
   stay ``C*``; durations vary well beyond the slot lengths.
4. **Reading and proof.** Each job's route is its operations in time order. The instance's own
   bound (computed from its data alone) must equal ``C*`` and the family's checker must accept
   the schedule, or the construction raises instead of returning.

Limits, said plainly: every instance is **bound-tight** (optimum = busiest machine's load),
which classical benchmarks often are not (of the 130 shipped instances with a proven optimum,
51 are bound-tight and none of the 38 square ones: ft10's optimum 930 is 275 above its bound
655, ta01's 1231 is 254 above 977), so they test how well a policy packs the
bottleneck machines, not how it closes a gap between bound and optimum. The structure is
special: the saturated machines (``ceil(machines / 3)`` by default) have exactly ``jobs``
(classical) or one-per-slot operations, and where jobs far outnumber machines (20x5) the best
dispatching rules come within 2-5 %, as on classical instances of that shape (on J3's 200x50
they stay 9-10 % above). Both shapes need at
least as many jobs as machines (a slot runs one job per saturated machine, each another job);
every job has the same number of operations (the family's instance type asks for it; upstream
J3 jobs have 10-15).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.jobshop.checker import constraint_satisfaction, plan_makespan
from crab_gym.envs.realm.jobshop.generator import SIZES
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.oracle import sequence_from_starts

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
    fill: float = 0.75,
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
        ops, horizon, sat = _recirculating_ops(jobs, machines, k, n_sat, low, high, rng)
    else:
        ops, horizon, sat = _classical_ops(jobs, machines, n_sat, low, high, rng)
    sched = _Schedule(jobs, machines, ops, horizon)
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


# ---------------------------------------------------------------------- env wiring
#: The ``construction`` value of a P11 ``generator`` option that draws constructed instances.
BOUND_TIGHT = "bound_tight"
#: Certificates of the instances built in this process, by fingerprint (newest last, bounded).
_CERTIFICATES: dict[str, ConstructionCertificate] = {}
_KEEP = 256


def draw_constructed(options: Mapping[str, Any], seed: int) -> JSSPInstance:
    """The constructed instance a generator with ``options`` (``n_jobs``, ``n_machines``,
    ``low``, ``high``) draws with ``seed``; its certificate is kept for
    :func:`constructed_reference` (the env's reference: value, bound and plan, no solver)."""
    inst, cert = constructed_instance(options["n_jobs"], options["n_machines"], seed=int(seed),
                                      low=max(1, int(options.get("low", 1))), high=int(options.get("high", 99)))
    _CERTIFICATES.pop(cert.fingerprint, None)
    _CERTIFICATES[cert.fingerprint] = cert
    while len(_CERTIFICATES) > _KEEP:
        del _CERTIFICATES[next(iter(_CERTIFICATES))]
    return inst


def constructed_reference(instance: JSSPInstance) -> Reference | None:
    """The reference of an instance :func:`draw_constructed` built in this process (None for
    any other: its yardstick is looked up as usual; a constructed instance still carries its
    optimum, so that lookup gives the same value, without the plan)."""
    cert = _CERTIFICATES.get(instance.fingerprint())
    return None if cert is None else cert.reference()


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
    if not recirculation and high < 2 * low:
        raise ValueError(f"high={high}: the classical shape cuts slots in halves of at least low={low}, so high >= {2 * low}")
    n_sat = math.ceil(machines / 3) if saturated is None else _whole(saturated, "saturated", 1)
    if n_sat > machines:
        raise ValueError(f"saturated={n_sat} exceeds the {machines} machines")
    if isinstance(fill, bool) or not isinstance(fill, (int, float)) or not 0 < fill <= 1:
        raise ValueError(f"fill must be in (0, 1], got {fill!r}")
    return k, n_sat


# ---------------------------------------------------------------------- the slot grid
Op = tuple[int, int, int, int]  # (job, machine, start, end)


def _slot_starts(lengths: list[int]) -> list[int]:
    out, t = [], 0
    for length in lengths:
        out.append(t)
        t += length
    return out


def _classical_ops(jobs: int, machines: int, n_sat: int, low: int, high: int,
                   rng: random.Random) -> tuple[list[Op], int, list[int]]:
    """``jobs`` slots. Each saturated machine runs one job per slot, a random perfect matching
    slots -> jobs among the (slot, job) pairs still free (a Latin rectangle), so it never idles.
    Each slot is cut in two halves; every other machine runs each job in a half of a slot where
    the job is free: a random matching jobs -> halves, a half taking one job per machine and
    one machine per job. Hall's condition holds (a job has at least ``jobs - saturated + 1``
    halves left, a half at most ``jobs - saturated`` jobs), so the matching always exists."""
    sat = sorted(rng.sample(range(machines), n_sat))
    lengths = [rng.randint(2 * low, high) for _ in range(jobs)]
    begins = _slot_starts(lengths)
    cuts = [b + low + rng.randint(0, n - 2 * low) for b, n in zip(begins, lengths)]
    free = [set(range(jobs)) for _ in range(jobs)]  # free[t]: jobs no saturated machine runs in slot t
    ops: list[Op] = []
    for mc in sat:
        for t, j in enumerate(_matching([sorted(row) for row in free], rng)):
            free[t].discard(j)
            ops.append((j, mc, begins[t], begins[t] + lengths[t]))
    halves = [(b, c) for b, c in zip(begins, cuts)] + [(c, b + n) for b, c, n in zip(begins, cuts, lengths)]
    free_halves = [[] for _ in range(jobs)]  # per job, the halves (t, jobs + t) of its free slots
    for t, row in enumerate(free):
        for j in row:
            free_halves[j] += (t, jobs + t)
    for mc in rng.sample([m for m in range(machines) if m not in set(sat)], machines - n_sat):
        for j, h in enumerate(_matching(free_halves, rng)):
            free_halves[j].remove(h)  # one machine per half and job
            ops.append((j, mc, *halves[h]))
    return ops, begins[-1] + lengths[-1], sat


def _matching(adj: list[list[int]], rng: random.Random) -> list[int]:
    """A random matching of every left node ``i`` to one of ``adj[i]`` (distinct): greedy at
    random, then shortest augmenting paths; ``RuntimeError`` if Hall's condition fails."""
    adj = [rng.sample(row, len(row)) for row in adj]
    owner: dict[int, int] = {}  # right node -> left node
    mate: list[int | None] = [None] * len(adj)
    for i in rng.sample(range(len(adj)), len(adj)):
        for r in adj[i]:
            if r not in owner:
                owner[r], mate[i] = i, r
                break
    for i in range(len(adj)):
        if mate[i] is None:
            _augment(i, adj, owner, mate)
    return [int(r) for r in mate]  # type: ignore[arg-type]


def _augment(root: int, adj: list[list[int]], owner: dict[int, int], mate: list) -> None:
    """Match left node ``root`` along a shortest augmenting path."""
    came: dict[int, int] = {}  # right node -> the left node it was reached from
    frontier = [root]
    while frontier:
        nxt = []
        for i in frontier:
            for r in adj[i]:
                if r in came:
                    continue
                came[r] = i
                if r not in owner:  # a free right node: flip the path back to the root
                    while True:
                        i_prev = came[r]
                        r_prev, owner[r], mate[i_prev] = mate[i_prev], i_prev, r
                        if i_prev == root:
                            return
                        r = r_prev
                nxt.append(owner[r])
        frontier = nxt
    raise RuntimeError("construction: no matching (Hall's condition fails)")


def _recirculating_ops(jobs: int, machines: int, k: int, n_sat: int, low: int, high: int,
                       rng: random.Random) -> tuple[list[Op], int, list[int]]:
    """``ceil(jobs * k / machines)`` slots of random lengths, each running ``machines`` jobs
    (the last one maybe fewer), drawn by :func:`_pick_jobs`, on the machines in random order;
    the saturated machines are drawn among those busy in every slot."""
    total = jobs * k
    widths = [machines] * (total // machines) + ([total % machines] if total % machines else [])
    left = [k] * jobs
    ops: list[Op] = []
    begin, full = 0, set(range(machines))
    for i, width in enumerate(widths):
        length = rng.randint(low, high)
        chosen = rng.sample(range(machines), width)
        for j, mc in zip(_pick_jobs(left, width, widths[i + 1:], rng), chosen):
            left[j] -= 1
            ops.append((j, mc, begin, begin + length))
        full &= set(chosen)
        begin += length
    return ops, begin, sorted(rng.sample(sorted(full), min(n_sat, len(full))))


def _pick_jobs(left: list[int], width: int, rest: list[int], rng: random.Random) -> list[int]:
    """``width`` distinct jobs for a slot: drawn at random, weighted by operations left, kept
    if the operations left after them still fit in the ``rest`` slots one per job and slot
    (Gale-Ryser); else the jobs with most left, which always fit."""
    for _ in range(8):
        keys = {j: rng.random() ** (1.0 / n) for j, n in enumerate(left) if n}
        chosen = sorted(keys, key=keys.__getitem__, reverse=True)[:width]
        after = list(left)
        for j in chosen:
            after[j] -= 1
        if _fits(after, rest):
            return chosen
    return sorted((j for j, n in enumerate(left) if n), key=lambda j: (-left[j], rng.random()))[:width]


def _fits(left: list[int], widths: list[int]) -> bool:
    """Whether jobs needing ``left`` operations fit in slots of ``widths``, at most one
    operation per job and slot (Gale-Ryser: the k widest slots take no more than the jobs can
    give k operations, for every k)."""
    caps = sorted(widths, reverse=True)
    need = sorted((n for n in left if n), reverse=True)
    room = given = 0
    busy = len(need)  # jobs needing at least kk operations
    for kk, cap in enumerate(caps, start=1):
        while busy and need[busy - 1] < kk:
            busy -= 1
        room, given = room + cap, given + busy
        if room > given:
            return False
    return sum(need) == room and (not need or need[0] <= len(caps))


# ---------------------------------------------------------------------- the schedule
class _Schedule:
    """Operations with start and end times, in time order per job and per machine."""

    def __init__(self, jobs: int, machines: int, ops: list[Op], horizon: int) -> None:
        ops = sorted(ops, key=lambda op: op[2])
        self.job = [op[0] for op in ops]
        self.mach = [op[1] for op in ops]
        self.start = [op[2] for op in ops]
        self.end = [op[3] for op in ops]
        self.job_ops: list[list[int]] = [[] for _ in range(jobs)]
        self.mach_ops: list[list[int]] = [[] for _ in range(machines)]
        for o, (j, mc, _, _) in enumerate(ops):
            self.job_ops[j].append(o)
            self.mach_ops[mc].append(o)
        self.horizon = horizon
        self.jpos = [0] * len(ops)
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
