"""N job-shop schedules advanced together in numpy arrays: the engine of the vector env.

It is :class:`~crab_gym.envs.realm.jobshop.sim.JobShopSchedule` (the single env's engine)
batched: the same earliest-start rule with left-shift insertion, the same observation arrays,
the same makespan bound, value for value. No Python loop runs over the envs in a step; one
batched dispatch is a few dozen numpy operations on arrays of N rows.

**Left-shift insertion, batched.** The single engine keeps each machine's operations
sorted and walks its idle gaps; sorted insertion is costly in arrays, so here each machine row
keeps its operations in dispatch order. Per slot it stores the length of the idle gap *before*
the operation (``gap``: from the end of the operation that precedes it in time) and a ``key``:
the start doubled, plus 1 when that gap is empty, shifted left to make room for the slot's own
index. The slot after the last one used is a sentinel for the open gap after the machine's
last operation; unused slots have keys above every other. An operation of duration ``p``
ready at ``t0`` fits before slot ``x`` iff ``gap[x] >= p`` and ``start[x] >= t0 + p``; it goes
before the fitting slot with the least key and starts at ``max(t0, start[x] - gap[x])``. This is
the single engine's first fitting gap: only gaps that end at or after ``t0 + p`` can hold it,
and among them the earliest in time is the first the single engine reaches. Slots share a
start only behind zero-duration operations; among those the one whose gap is not empty comes
first in time, which the ``+1`` settles. (With zero-duration operations the times are always
the same; several of them at one instant on one machine may be listed in another order by
:meth:`JobShopBatch.sequences`.) The chosen slot's gap then shrinks, the new operation takes
the sentinel's slot and the sentinel moves up one: a few point writes per env, no shifting.

The fit test runs on the gathered rows transposed (slots x envs), where the per-env numbers
broadcast along the contiguous axis and the least key is a reduction over a handful of rows:
both sign tests are one subtraction each, whose sign bits mark the slots that do not fit.

The instances' data live in a table of distinct instances (one row when every env plays the
same instance), so the per-step lookups stay in cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crab_gym.envs.realm.jobshop.model import JSSPInstance

#: Bit 30 of a key: set on unused slots and, during a search, on slots that do not fit.
_OUT = np.int32(2**30)


class JobShopBatch:
    """``n_envs`` partial schedules, one instance each (all of one size), in arrays.

    Public read-only state, one row per env (do not mutate): ``next_op`` (N, n),
    ``job_ready`` (N, n), ``start`` (N, n, m; -1 unscheduled), ``makespan`` (N,),
    ``lb_makespan`` (N,), ``n_scheduled`` (N,), ``jobs_done`` (N,), and the observation arrays
    ``done`` (int8, N x n x m), ``lower_bound`` (float32, N x n x m), ``machine_available``
    (float32, N x M) and ``mask`` (int8, N x n), as in the single engine.
    ``processing_time`` (float32) and ``machine`` (int64) are the instances' data as observed:
    they are replaced, never written in place, when an instance changes, so a reference to
    them handed out earlier stays valid.
    """

    def __init__(self, instances: Sequence[JSSPInstance]) -> None:
        if not instances:
            raise ValueError("JobShopBatch needs at least one instance")
        first = instances[0]
        self.n_envs = n = len(instances)
        self.n_jobs, self.n_ops = first.shape
        self.n_machines = first.n_machines
        self.n_total = self.n_jobs * self.n_ops
        # slots per machine row: room for every operation the machine gets, plus the
        # sentinel, rounded up to a power of two (the slot index lives in a key's low bits)
        per_machine = max(_most_per_machine(inst) for inst in instances)
        self.shift = max(1, int(per_machine).bit_length())
        self.width = 1 << self.shift
        #: Every time stays below this (the sentinel's start): keys stay below bit 30.
        self.time_limit = (1 << (29 - self.shift)) - 1
        self.instances: list[JSSPInstance] = list(instances)
        self._build_table(self.instances)
        shape = (n, self.n_jobs, self.n_ops)
        self.next_op = np.zeros((n, self.n_jobs), dtype=np.int64)
        self.job_ready = np.zeros((n, self.n_jobs), dtype=np.int64)
        self.start = np.full(shape, -1, dtype=np.int64)
        self.makespan = np.zeros(n, dtype=np.int64)
        self.lb_makespan = np.zeros(n, dtype=np.int64)
        self.n_scheduled = np.zeros(n, dtype=np.int64)
        self.jobs_done = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(shape, dtype=np.int8)
        self.lower_bound = np.zeros(shape, dtype=np.float32)
        self.machine_available = np.zeros((n, self.n_machines), dtype=np.float32)
        self.mask = np.ones((n, self.n_jobs), dtype=np.int8)
        # machine rows (row = env * n_machines + machine): keys then gaps, one slot per
        # operation in dispatch order, then the sentinel
        rows = n * self.n_machines
        self.slots = np.zeros((rows, 2 * self.width), dtype=np.int32)
        self.slot_count = np.zeros(rows, dtype=np.int64)
        self._slot_index = np.arange(self.width, dtype=np.int32)
        self._later = (np.arange(self.n_ops)[None, :] >= np.arange(self.n_ops)[:, None]).astype(np.float32)
        self._all = np.arange(n)
        self._lines = self._all * (2 * self.width)  # row starts in a gathered (n, 2W) block
        self._job_base = self._all * self.n_jobs
        self.reset()

    # ------------------------------------------------------------------ instances
    def _build_table(self, instances: Sequence[JSSPInstance]) -> None:
        """The table of distinct instances (``_table_*``, indexed by ``env_table``) and the
        observed data arrays of every env."""
        distinct: dict[int, int] = {}
        chosen: list[JSSPInstance] = []
        index = np.zeros(len(instances), dtype=np.int64)
        for i, inst in enumerate(instances):
            self._check(inst)
            if id(inst) not in distinct:
                distinct[id(inst)] = len(chosen)
                chosen.append(inst)
            index[i] = distinct[id(inst)]
        dur = np.array([inst.durations for inst in chosen], dtype=np.int64)
        cs = np.cumsum(dur, axis=2)
        self._table_duration = dur.ravel()
        self._table_machine = np.array([inst.machines for inst in chosen], dtype=np.int64).ravel()
        self._table_cumsum32 = cs.astype(np.float32)
        self._table_after = (cs[:, :, -1:] - cs).ravel()
        self._table_initial_lb = cs[:, :, -1].max(axis=1)
        self.env_table = index
        self._one_instance = len(chosen) == 1
        self.processing_time = dur[index].astype(np.float32)
        self.machine = self._table_machine.reshape(dur.shape)[index]
        self.processing_time.flags.writeable = False
        self.machine.flags.writeable = False

    def _check(self, inst: JSSPInstance) -> None:
        if inst.shape != (self.n_jobs, self.n_ops) or inst.n_machines != self.n_machines:
            raise ValueError(
                f"instance {inst.name} is {inst.n_jobs}x{inst.n_machines} ({inst.n_ops} ops per job); "
                f"the batch is {self.n_jobs}x{self.n_machines} ({self.n_ops} ops per job)"
            )
        total = sum(sum(row) for row in inst.durations)
        if total >= self.time_limit:
            raise ValueError(
                f"instance {inst.name}: its durations add up to {total}; the batch engine "
                f"keeps times below {self.time_limit} at this size (use the single env)"
            )
        if _most_per_machine(inst) >= self.width:
            raise ValueError(
                f"instance {inst.name} puts {_most_per_machine(inst)} operations on one machine; "
                f"this batch was built for at most {self.width - 1}"
            )

    def set_instances(self, rows: Sequence[int], instances: Sequence[JSSPInstance]) -> None:
        """Give the envs ``rows`` other instances of the batch's size (then :meth:`reset`
        them). The observed data arrays are rebuilt, never changed in place."""
        merged = list(self.instances)
        for i, inst in zip(rows, instances, strict=True):
            merged[int(i)] = inst
        self._build_table(merged)
        self.instances = merged

    # ------------------------------------------------------------------ state
    def reset(self, rows: np.ndarray | None = None) -> None:
        """Put the schedules of ``rows`` (an index array; None: all) back to empty."""
        r = slice(None) if rows is None else rows
        table = self.env_table[r]
        self.next_op[r] = 0
        self.job_ready[r] = 0
        self.start[r] = -1
        self.makespan[r] = 0
        self.lb_makespan[r] = self._table_initial_lb[table]
        self.n_scheduled[r] = 0
        self.jobs_done[r] = 0
        self.done[r] = 0
        self.lower_bound[r] = self._table_cumsum32[table]
        self.machine_available[r] = 0
        self.mask[r] = 1
        rows3 = self.slots.reshape(self.n_envs, self.n_machines, 2 * self.width)
        rows3[r, :, : self.width] = _OUT | self._slot_index  # unused
        rows3[r, :, self.width :] = 0
        rows3[r, :, 0] = (2 * self.time_limit) << self.shift  # slot 0: the sentinel, gap from 0
        rows3[r, :, self.width] = self.time_limit
        self.slot_count.reshape(self.n_envs, self.n_machines)[r] = 0

    @property
    def complete(self) -> np.ndarray:
        """(N,) bool: every operation scheduled."""
        return self.n_scheduled == self.n_total

    def legal(self, jobs: np.ndarray) -> np.ndarray:
        """(N,) bool: ``jobs[i]`` is a job of env ``i`` with operations left."""
        as_unsigned = jobs.astype(np.uint64)  # a negative job becomes huge
        inside = as_unsigned < self.n_jobs
        safe = np.minimum(as_unsigned, self.n_jobs - 1).astype(np.int64)
        return inside & (self.mask.ravel()[self._job_base + safe] != 0)

    # ------------------------------------------------------------------ dispatch
    def dispatch(self, rows: np.ndarray | None, jobs: np.ndarray) -> None:
        """Place the next operation of ``jobs[x]`` in env ``rows[x]`` (None: every env, job
        ``jobs[i]`` in env ``i``; each legal, see :meth:`legal`) at its earliest feasible start."""
        every = rows is None
        envs = self._all if every else rows
        rj = (self._job_base if every else envs * self.n_jobs) + jobs
        k = self.next_op.ravel()[rj]
        tj = jobs if self._one_instance else self.env_table[envs] * self.n_jobs + jobs
        op = tj * self.n_ops + k  # the operation, in the table
        mc = self._table_machine[op]
        p = self._table_duration[op]
        t0 = self.job_ready.ravel()[rj]
        rm = envs * self.n_machines + mc
        width, shift = self.width, self.shift
        # the first gap that holds the operation (see the module docstring)
        gathered = self.slots.take(rm, axis=0)  # (K, 2W): keys, gaps
        by_slot = gathered.T.copy()  # (2W, K)
        keys = by_slot[:width]
        miss = by_slot[width:] - p.astype(np.int32)
        miss |= keys - ((2 * (t0 + p)) << shift).astype(np.int32)
        miss >>= 31  # -1 where a test failed
        miss &= _OUT
        miss |= keys
        best = miss.min(axis=0).astype(np.int64)
        slot = best & (width - 1)
        line = self._lines if every else np.arange(len(rm)) * (2 * width)
        flat = gathered.ravel()
        count = self.slot_count[rm]
        next_start = best >> (shift + 1)
        prev_end = next_start - flat[line + width + slot]
        last_end = self.time_limit - flat[line + width + count].astype(np.int64)
        start = np.maximum(prev_end, t0)
        end = start + p
        out = self.slots.ravel()
        base = rm * (2 * width)
        before = base + slot  # the key of the slot the new operation goes before
        out[before + width] = next_start - end
        out[before] = (((2 * next_start + (next_start == end)) << shift) | slot)
        new = base + count  # the sentinel's slot: the sentinel moves up one
        out[new] = ((2 * start + (start == prev_end)) << shift) | count
        out[new + width] = start - prev_end
        last_end = np.maximum(last_end, end)
        out[new + 1] = ((2 * self.time_limit) << shift) | (count + 1)
        out[new + 1 + width] = self.time_limit - last_end
        self.slot_count[rm] = count + 1
        self.machine_available.ravel()[rm] = last_end
        # the env's own arrays
        local = rj * self.n_ops + k
        self.start.ravel()[local] = start
        self.job_ready.ravel()[rj] = end
        self.next_op.ravel()[rj] = k + 1
        self.done.ravel()[local] = 1
        # the job's bounds from operation k on move by this operation's delay (whole numbers
        # below 2**24 are exact in float32, so they equal the single engine's)
        delay = start - t0
        late = np.flatnonzero(delay)  # most operations start when their job is ready
        if len(late):
            lb_rows = self.lower_bound.reshape(-1, self.n_ops)
            rows_late = rj[late]
            lb_rows[rows_late] = lb_rows.take(rows_late, axis=0) + self._later.take(k[late], axis=0) * (
                delay[late].astype(np.float32)[:, None]
            )
        bound = end + self._table_after[op]
        finished = k + 1 == self.n_ops
        if every:
            self.n_scheduled += 1
            np.maximum(self.makespan, end, out=self.makespan)
            np.maximum(self.lb_makespan, bound, out=self.lb_makespan)
            self.jobs_done += finished
        else:
            self.n_scheduled[envs] += 1
            self.makespan[envs] = np.maximum(self.makespan[envs], end)
            self.lb_makespan[envs] = np.maximum(self.lb_makespan[envs], bound)
            self.jobs_done[envs] += finished
        if finished.any():
            self.mask.ravel()[rj[finished]] = 0

    # ------------------------------------------------------------------ read-outs
    def sequences(self, i: int) -> list[list[int]]:
        """Env ``i``'s jobs in processing order on each machine (REALM's ``sequence``):
        by start, a zero-duration operation before a longer one starting with it."""
        ops = [
            (int(self.start[i, j, k]), int(self.processing_time[i, j, k] > 0), j, int(self.machine[i, j, k]))
            for j in range(self.n_jobs)
            for k in range(int(self.next_op[i, j]))
        ]
        out: list[list[int]] = [[] for _ in range(self.n_machines)]
        for _, _, j, mc in sorted(ops):
            out[mc].append(j)
        return out


def _most_per_machine(inst: JSSPInstance) -> int:
    """The most operations ``inst`` puts on one machine."""
    return int(np.bincount(np.asarray(inst.machines).ravel()).max())
