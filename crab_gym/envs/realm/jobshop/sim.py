"""A fast job-shop schedule builder: the state behind ``Realm-P11-v0``.

``dispatch(j)`` places job j's next operation at its **earliest feasible start** on its
machine: not before the job's previous operation ends, and in the earliest idle gap of the
machine long enough to hold it (left-shift insertion, as in L2D), else after the machine's
last operation. Dispatching the operations of any schedule in order of their start times
rebuilds a schedule at least as good, so every active (hence every optimal) schedule is
reachable. The result is always semi-active: each operation starts when its job
predecessor or its machine predecessor ends, so a schedule is fully described by the
machine sequences (REALM's solution shape).

A zero-duration operation still takes its place in its machine's sequence.

The hot path is plain Python on lists plus a few in-place numpy writes to the arrays the
env exposes as observations, so one dispatch costs a few microseconds.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import numpy as np

from crab_gym.envs.realm.jobshop.model import JSSPInstance


def first_fit(starts: list[int], ends: list[int], t: int, p: int) -> tuple[int, int]:
    """The earliest start ``>= t`` of ``p`` units in the first idle gap of a machine whose busy
    intervals are ``starts``/``ends`` (sorted by start, not overlapping), and the index the new
    interval takes in those lists: left-shift insertion, shared by P11's and the J variants'
    engines (each calls it once per placement, so it stays a plain loop on lists)."""
    i = bisect_right(ends, t)  # intervals before i end by t: they cannot block
    count = len(starts)
    while i < count:
        if t + p <= starts[i]:
            break
        e = ends[i]
        if e > t:
            t = e
        i += 1
    return t, i


class JobShopSchedule:
    """A partial schedule of an instance, built one operation at a time.

    Public read-only state (do not mutate): ``next_op[j]`` (operations of job j scheduled
    so far), ``job_ready[j]`` (end of its last scheduled operation), ``makespan`` (latest end
    so far), ``lb_makespan`` (max over operations of their completion lower bound),
    ``n_scheduled``, ``jobs_done``, and the observation arrays ``done`` (int8, n x m),
    ``lower_bound`` (float32, n x m: the end of scheduled operations, and for the others the
    job's ready time plus the durations up to them), ``machine_available`` (float32, m: end of
    the machine's last operation) and ``mask`` (int8, n: jobs with operations left).
    """

    def __init__(self, instance: JSSPInstance):
        self.instance = instance
        self.n_jobs, self.n_ops = instance.shape
        self.n_machines = instance.n_machines
        self.n_total = self.n_jobs * self.n_ops
        self._dur = [list(r) for r in instance.durations]
        self._mach = [list(r) for r in instance.machines]
        # after[j][k] = sum of durations of job j strictly after operation k
        self._after = [[sum(r[k + 1 :]) for k in range(len(r))] for r in self._dur]
        cs = np.cumsum(np.asarray(instance.durations, dtype=np.float64), axis=1)
        self._cumsum = cs.astype(np.float32)
        self._cs_list = cs.astype(np.int64).tolist()
        self._initial_lb = self._cumsum.copy()
        self.horizon = int(sum(sum(r) for r in self._dur))
        self.done = np.zeros((self.n_jobs, self.n_ops), dtype=np.int8)
        self.lower_bound = np.zeros((self.n_jobs, self.n_ops), dtype=np.float32)
        self.machine_available = np.zeros(self.n_machines, dtype=np.float32)
        self.mask = np.ones(self.n_jobs, dtype=np.int8)
        self._lb_rows = list(self.lower_bound)  # row views, written in place
        self._cs_rows = list(self._cumsum)
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        n, m = self.n_jobs, self.n_machines
        self.next_op = [0] * n
        self.job_ready = [0] * n
        self.start = [[-1] * self.n_ops for _ in range(n)]
        self.m_starts: list[list[int]] = [[] for _ in range(m)]
        self.m_ends: list[list[int]] = [[] for _ in range(m)]
        self.m_jobs: list[list[int]] = [[] for _ in range(m)]
        self.makespan = 0
        self.n_scheduled = 0
        self.jobs_done = 0
        self.lb_makespan = max(int(r[-1]) for r in self._cs_list)
        self.done.fill(0)
        self.lower_bound[...] = self._initial_lb
        self.machine_available.fill(0)
        self.mask.fill(1)

    @property
    def complete(self) -> bool:
        return self.n_scheduled == self.n_total

    def can_dispatch(self, job: int) -> bool:
        return 0 <= job < self.n_jobs and self.next_op[job] < self.n_ops

    def job_finished(self, job: int) -> bool:
        return self.next_op[job] == self.n_ops

    def snapshot(self) -> tuple:
        """Everything that defines the state, for equality checks in tests."""
        return (
            tuple(self.next_op),
            tuple(map(tuple, self.start)),
            tuple(map(tuple, self.m_jobs)),
            self.makespan,
            self.lb_makespan,
            self.done.tobytes(),
            self.lower_bound.tobytes(),
            self.machine_available.tobytes(),
            self.mask.tobytes(),
        )

    # ------------------------------------------------------------------ dispatch
    def earliest_start(self, job: int) -> tuple[int, int]:
        """(start, position in the machine's sequence) for job's next operation."""
        k = self.next_op[job]
        mc = self._mach[job][k]
        return first_fit(self.m_starts[mc], self.m_ends[mc], self.job_ready[job], self._dur[job][k])

    def dispatch(self, job: int) -> tuple[int, int, int]:
        """Place job's next operation; returns (operation index, start, end).

        The caller checks legality with :meth:`can_dispatch` (the env does, in
        ``_check_action``); this method assumes it.
        """
        k = self.next_op[job]
        mc = self._mach[job][k]
        p = self._dur[job][k]
        starts, ends = self.m_starts[mc], self.m_ends[mc]
        t, i = first_fit(starts, ends, self.job_ready[job], p)
        end = t + p
        if i == len(starts):
            starts.append(t)
            ends.append(end)
            self.m_jobs[mc].append(job)
            self.machine_available[mc] = end
        else:
            starts.insert(i, t)
            ends.insert(i, end)
            self.m_jobs[mc].insert(i, job)
        self._commit(job, k, t, end)
        return k, t, end

    def _commit(self, job: int, k: int, t: int, end: int) -> None:
        self.start[job][k] = t
        self.job_ready[job] = end
        self.next_op[job] = k + 1
        self.n_scheduled += 1
        if end > self.makespan:
            self.makespan = end
        self.done[job, k] = 1
        row = self._lb_rows[job]
        np.add(self._cs_rows[job][k:], end - self._cs_list[job][k], out=row[k:])
        last = end + self._after[job][k]
        if last > self.lb_makespan:
            self.lb_makespan = last
        if k + 1 == self.n_ops:
            self.mask[job] = 0
            self.jobs_done += 1

    # ------------------------------------------------------------------ whole plans
    def check_plan(self, sequence: Any) -> tuple[str | None, list[tuple[int, int]]]:
        """Validate a plan ``[[jobs in order] per machine]`` against the current state.

        Returns ``(reason, [])`` if it cannot be used, else ``(None, order)`` where order
        lists (job, start) for the remaining operations in the order they are placed. The
        state is not changed. Operations already scheduled stay where they are, so on each
        machine the plan must begin with them, in the order they run.
        """
        reason = self._plan_shape_error(sequence)
        if reason is not None:
            return reason, []
        return self._place_plan([[int(j) for j in r] for r in sequence])

    def _plan_shape_error(self, sequence: Any) -> str | None:
        """Why ``sequence`` is not one list per machine naming each of its operations' jobs
        once, starting with those already scheduled there; None if it is."""
        m = self.n_machines
        if not isinstance(sequence, (list, tuple)) or len(sequence) != m:
            got = len(sequence) if isinstance(sequence, (list, tuple)) else type(sequence).__name__
            return f"sequence must hold {m} lists, one per machine (machine 0 first); got {got}"
        expected: list[list[int]] = [[] for _ in range(m)]
        for j, mrow in enumerate(self._mach):
            for mc in mrow:
                expected[mc].append(j)
        for mc in range(m):
            row = sequence[mc]
            if not isinstance(row, (list, tuple)) or not all(isinstance(j, (int, np.integer)) for j in row):
                return f"machine {mc}: expected a list of job indices"
            if sorted(int(j) for j in row) != expected[mc]:
                return _wrong_jobs(mc, expected[mc], row)
            fixed = self.m_jobs[mc]
            if [int(j) for j in row[: len(fixed)]] != fixed:
                return (
                    f"machine {mc}: operations already scheduled stay in place, so its list must "
                    f"start with {fixed}; got {[int(j) for j in row[: len(fixed)]]}"
                )
        return None

    def _place_plan(self, rows: list[list[int]]) -> tuple[str | None, list[tuple[int, int]]]:
        """Semi-active simulation of the remaining operations in the machine orders ``rows``:
        ``(None, [(job, start)...])``, or the deadlock's description and ``[]``."""
        m = self.n_machines
        nxt = list(self.next_op)
        ready = list(self.job_ready)
        free = [e[-1] if e else 0 for e in self.m_ends]
        ptr = [len(f) for f in self.m_jobs]
        order: list[tuple[int, int]] = []
        remaining = self.n_total - self.n_scheduled
        progress = True
        while len(order) < remaining and progress:
            progress = False
            for mc in range(m):
                while ptr[mc] < len(rows[mc]):
                    j = rows[mc][ptr[mc]]
                    k = nxt[j]
                    if k >= self.n_ops or self._mach[j][k] != mc:
                        break
                    t = max(ready[j], free[mc])
                    end = t + self._dur[j][k]
                    order.append((j, t))
                    ready[j] = free[mc] = end
                    nxt[j] = k + 1
                    ptr[mc] += 1
                    progress = True
        if len(order) < remaining:
            waits = []
            for mc in range(m):
                if ptr[mc] < len(rows[mc]):
                    j = rows[mc][ptr[mc]]
                    k = nxt[j]
                    waits.append(f"machine {mc} waits for job {j}, whose next operation is on machine {self._mach[j][k]}")
            return "the plan deadlocks (machine orders contradict job orders): " + "; ".join(waits[:4]), []
        return None, order

    def apply_plan(self, order: list[tuple[int, int]]) -> None:
        """Commit an order returned by :meth:`check_plan` (appends each operation)."""
        for job, t in order:
            k = self.next_op[job]
            mc = self._mach[job][k]
            end = t + self._dur[job][k]
            self.m_starts[mc].append(t)
            self.m_ends[mc].append(end)
            self.m_jobs[mc].append(job)
            self.machine_available[mc] = end
            self._commit(job, k, t, end)

    # ------------------------------------------------------------------ read-outs
    def sequences(self) -> list[list[int]]:
        """Jobs in processing order on each machine: REALM's ``sequence`` shape."""
        return [list(r) for r in self.m_jobs]

    def operations(self) -> list[dict[str, int]]:
        """Every scheduled operation as ``{job, op, machine, start, end}``, by start time."""
        out = []
        for j in range(self.n_jobs):
            for k in range(self.next_op[j]):
                t = self.start[j][k]
                out.append({"job": j, "op": k, "machine": self._mach[j][k], "start": t, "end": t + self._dur[j][k]})
        out.sort(key=lambda o: (o["start"], o["machine"], o["job"]))
        return out

    def critical_jobs(self) -> list[int]:
        """Jobs whose current completion equals the makespan."""
        return [j for j in range(self.n_jobs) if self.next_op[j] and self.job_ready[j] == self.makespan]


def _wrong_jobs(mc: int, expected: list[int], row: Any) -> str:
    """Why machine ``mc``'s list is not the multiset ``expected`` (jobs missing, extra, repeated)."""
    want, got = _counts(expected), _counts(row)
    missing = sorted(j for j in want if got.get(j, 0) < want[j])
    extra = sorted(j for j in got if got[j] > want.get(j, 0))
    parts = []
    if missing:
        parts.append(f"missing job(s) {missing}")
    if extra:
        parts.append(f"unexpected or repeated job(s) {extra}")
    return (
        f"machine {mc}: must list every job that has an operation on it, once per "
        f"operation ({'; '.join(parts)})"
    )


def _counts(values: Sequence[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for v in values:
        out[int(v)] = out.get(int(v), 0) + 1
    return out


def replay_order(starts: Sequence[Sequence[int]]) -> list[int]:
    """The dispatch actions (job indices) that rebuild a schedule given by start times.

    Operations are taken by start time (ties: by job index, then operation index); by the
    engine's earliest-start rule each one lands no later than in the given schedule.
    """
    ops = sorted((t, j, k) for j, row in enumerate(starts) for k, t in enumerate(row))
    return [j for _, j, _ in ops]
