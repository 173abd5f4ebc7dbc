"""N job-shop schedules advanced together in numpy arrays: the engine of the vector env.

It is :class:`~crab_gym.envs.realm.jobshop.sim.JobShopSchedule` (the single env's engine)
batched: the same earliest-start rule with left-shift insertion, the same observation arrays,
the same makespan bound, value for value. No Python loop runs over the envs in a step; one
batched dispatch is a few dozen numpy operations on arrays of N rows.

**Left-shift insertion, batched.** The single engine keeps each machine's operations
sorted and walks its idle gaps; sorted insertion is costly in arrays, so here each machine row
keeps its operations in dispatch order. A slot is one int64: its low half a ``key`` (the
operation's start doubled, plus 1 when the idle gap before it is empty, shifted left to make
room for the slot's own index), its high half the length of the idle ``gap`` *before* the
operation (from the end of the operation that precedes it in time). The slot after the last
one used is a sentinel for the open gap after the machine's last operation; unused slots have
keys above every other. An operation of duration ``p`` ready at ``t0`` fits before slot ``x``
iff ``gap[x] >= p`` and ``start[x] >= t0 + p``; it goes before the fitting slot with the least
key and starts at ``max(t0, start[x] - gap[x])``. This is the single engine's first fitting
gap: only gaps that end at or after ``t0 + p`` can hold it, and among them the earliest in
time is the first the single engine reaches. Slots share a start only behind zero-duration
operations; among those the one whose gap is not empty comes first in time, which the ``+1``
settles. The chosen slot's gap then shrinks, the new operation takes the sentinel's slot and
the sentinel moves up one: three point writes per env, no shifting.

Both fit tests are one subtraction: ``slot - (p << 32 | threshold)`` has its sign bit set when
the gap is too short and its bit 31 set (a borrow) when the start is too early. The test runs
on the gathered rows transposed (slots x envs), where the per-env numbers broadcast along the
contiguous axis and the least key is a reduction over a handful of rows. Wide rows (64 slots
or more, as J3's 200x50: 69 slots, the most operations a machine gets plus the sentinel) are
gathered only up to the fullest gathered row's sentinel: the slots after it are unused in
every gathered row.

**Jobs of different lengths** (``job_lengths``, for J3's jobs padded to one length): a job
completes with its last real operation (the cells after it are never dispatched), and a
delay moves the job's bounds only up to its length.

Times stay below 2**24, where float32 observations are exact. (With zero-duration operations
the times are always the single engine's; several of them at one instant on one machine may
be listed in another order by :meth:`JobShopBatch.sequences`.) The instances' data live in a
table of distinct instances (one row when every env plays the same instance), so the per-step
lookups stay in cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crab_gym.envs.realm.jobshop.model import JSSPInstance

#: Bit 30 of a key: set on unused slots.
_UNUSED = np.int64(2**30)
_LOW = np.int64(0xFFFFFFFF)
#: The bits of ``slot - (p << 32 | threshold)`` that mark a slot that does not fit.
_MISS = np.int64(-(2**63) | 2**31)
#: Float32 observations are exact below this.
_EXACT = 2**24


class JobShopBatch:
    """``n_envs`` partial schedules, one instance each (all of one size), in arrays.

    Public read-only state, one row per env (do not mutate): ``next_op`` (N, n),
    ``job_ready`` (N, n), ``makespan`` (N,), ``n_scheduled`` (N,), ``jobs_done`` (N,),
    ``lb_makespan`` (N,; kept only with ``track_bound``), and the observation arrays ``done``
    (int8, N x n x m), ``lower_bound`` (float32, N x n x m), ``machine_available`` (float32,
    N x M) and ``mask`` (int8, N x n), as in the single engine. ``processing_time``
    (float32) and ``machine`` (int64) are the instances' data as observed: they are replaced,
    never written in place, when an instance changes, so a reference handed out stays valid.
    ``job_lengths`` (N x n): each job's real operations, the rest padding that is never
    dispatched and is observed as done with bound 0 (None: every job has ``n_ops``);
    ``n_scheduled`` then counts real operations.
    """

    def __init__(
        self,
        instances: Sequence[JSSPInstance],
        *,
        track_bound: bool = True,
        job_lengths: Sequence[Sequence[int]] | None = None,
    ) -> None:
        if not instances:
            raise ValueError("JobShopBatch needs at least one instance")
        first = instances[0]
        self.n_envs = n = len(instances)
        self.n_jobs, self.n_ops = first.shape
        self.n_machines = first.n_machines
        self.n_total = self.n_jobs * self.n_ops
        self.track_bound = track_bound
        self.job_lengths = None if job_lengths is None else np.asarray(job_lengths, dtype=np.int64)
        if self.job_lengths is not None and self.job_lengths.shape != (n, self.n_jobs):
            raise ValueError(f"job_lengths must be ({n}, {self.n_jobs}), got {self.job_lengths.shape}")
        # slots per machine row: room for every operation the machine gets, plus the sentinel
        # (the slot index lives in a key's low ``shift`` bits); rounded up to a power of two
        # below 64 slots (room for other instances' rows in set_instances), else just enough:
        # less memory to walk (J3: 69 slots, not 128)
        per_machine = max(_most_per_machine(inst) for inst in instances)
        self.shift = max(1, int(per_machine).bit_length())
        self.width = 1 << self.shift if per_machine < 64 else int(per_machine) + 1
        self._slot_bits = (1 << self.shift) - 1  # a key's slot index
        #: Every time stays below this (the sentinel's start).
        self.time_limit = min(1 << (29 - self.shift), _EXACT) - 1
        self._sentinel_key = (2 * self.time_limit) << self.shift  # a sentinel's key without its slot
        self.instances: list[JSSPInstance] = list(instances)
        self._build_table(self.instances)
        shape = (n, self.n_jobs, self.n_ops)
        self.next_op = np.zeros((n, self.n_jobs), dtype=np.int64)
        self.job_ready = np.zeros((n, self.n_jobs), dtype=np.int64)
        self.makespan = np.zeros(n, dtype=np.int64)
        self.lb_makespan = np.zeros(n, dtype=np.int64)
        self.n_scheduled = np.zeros(n, dtype=np.int64)
        self.jobs_done = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(shape, dtype=np.int8)
        self.lower_bound = np.zeros(shape, dtype=np.float32)
        self.machine_available = np.zeros((n, self.n_machines), dtype=np.float32)
        self.mask = np.ones((n, self.n_jobs), dtype=np.int8)
        # machine rows (row = env * n_machines + machine): one slot per operation in dispatch
        # order, then the sentinel
        self.slots = np.zeros((n * self.n_machines, self.width), dtype=np.int64)
        self.slot_count = np.zeros(n * self.n_machines, dtype=np.int64)
        self._later = (np.arange(self.n_ops)[None, :] >= np.arange(self.n_ops)[:, None]).astype(np.float32)
        self._all = np.arange(n)
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
        self._table_length: np.ndarray | None = None
        self._table_live: np.ndarray | None = None
        if self.job_lengths is not None:  # a job ends at its length: the cells after it stay still
            first_row = np.unique(index, return_index=True)[1]
            lengths = self.job_lengths[first_row]
            self._table_length = lengths.ravel()
            live = (np.arange(self.n_ops) < lengths[:, :, None]).astype(np.float32)
            self._table_live = live.reshape(-1, self.n_ops)
            self._table_cumsum32 *= live  # padding shows bound 0 and done, as a job's end does
            self._table_done0 = (1 - live).astype(np.int8)
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
        if self.job_lengths is not None:
            raise ValueError("set_instances: a batch built with job_lengths keeps its instances")
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
        self.makespan[r] = 0
        self.lb_makespan[r] = self._table_initial_lb[table]
        self.n_scheduled[r] = 0
        self.jobs_done[r] = 0
        self.done[r] = 0 if self._table_live is None else self._table_done0[table]
        self.lower_bound[r] = self._table_cumsum32[table]
        self.machine_available[r] = 0
        self.mask[r] = 1
        rows3 = self.slots.reshape(self.n_envs, self.n_machines, self.width)
        rows3[r] = _UNUSED | np.arange(self.width)
        rows3[r, :, 0] = self._sentinel(0, 0)  # the gap from time 0
        self.slot_count.reshape(self.n_envs, self.n_machines)[r] = 0

    def _sentinel(self, slot: np.ndarray | int, last_end: np.ndarray | int) -> np.ndarray | int:
        """The packed sentinel at ``slot`` after a machine's last end ``last_end``."""
        return (self._sentinel_key | slot) | ((self.time_limit - last_end) << 32)

    def _legality(self, jobs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N,) bool: ``jobs[i]`` is a job of env ``i`` with operations left; the jobs clipped
        into range; their (env, job) rows."""
        as_unsigned = jobs.astype(np.uint64)  # a negative job becomes huge
        safe = np.minimum(as_unsigned, self.n_jobs - 1).astype(np.int64)
        rj = self._job_base + safe
        return (as_unsigned < self.n_jobs) & (self.mask.ravel()[rj] != 0), safe, rj

    # ------------------------------------------------------------------ dispatch
    def try_dispatch(self, jobs: np.ndarray, skip: np.ndarray | None = None) -> np.ndarray:
        """Dispatch ``jobs[i]`` in every env ``i`` where it is legal (and ``skip`` is False);
        returns (N,) bool: where it was."""
        legal, safe, rj = self._legality(jobs)
        if skip is not None:
            legal &= ~skip
        if legal.all():
            self._dispatch(None, safe, rj)
        else:
            rows = np.flatnonzero(legal)
            if len(rows):
                self._dispatch(rows, safe[rows], rj[rows])
        return legal

    def _dispatch(self, rows: np.ndarray | None, jobs: np.ndarray, rj: np.ndarray) -> None:
        """Place the next operation of ``jobs[x]`` (legal) in env ``rows[x]`` (None: every
        env, ``jobs[i]`` in env ``i``) at its earliest feasible start; ``rj`` = (env, job) rows."""
        every = rows is None
        envs = self._all if every else rows
        k = self.next_op.ravel()[rj]
        tj = jobs if self._one_instance else self.env_table[envs] * self.n_jobs + jobs
        op = tj * self.n_ops + k  # the operation, in the table
        mc = self._table_machine[op]
        p = self._table_duration[op]
        t0 = self.job_ready.ravel()[rj]
        rm = envs * self.n_machines + mc
        start, end = self._place_in_gap(rm, t0, p)
        # the env's own arrays
        self.done.ravel()[rj * self.n_ops + k] = 1
        self.job_ready.ravel()[rj] = end
        self.next_op.ravel()[rj] = k + 1
        self._shift_bounds(rj, tj, k, start - t0)
        last = self.n_ops if self._table_length is None else self._table_length[tj]
        self._tally(envs, rj, op, k + 1 == last, end, every)

    def _place_in_gap(self, rm: np.ndarray, t0: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Put each operation (duration ``p``, ready at ``t0``) in the first gap of its
        (env, machine) row ``rm`` that holds it (see the module docstring); its (start, end)."""
        width, shift = self.width, self.shift
        count = self.slot_count[rm]
        if width >= 64:  # wide rows (J3's 69 slots): only the slots up to the fullest row's sentinel
            gathered = self.slots[rm, : int(count.max()) + 1]
        else:  # narrow rows (P11's 16): whole rows are cheaper to gather
            gathered = self.slots.take(rm, axis=0)
        by_slot = gathered.T.copy()  # (slots, K)
        test = by_slot - ((p << 32) | ((2 * (t0 + p)) << shift))
        test &= _MISS
        by_slot &= _LOW
        by_slot |= test  # a key, with a high bit set where the slot does not fit
        best = by_slot.view(np.uint64).min(axis=0).view(np.int64)
        slot = best & self._slot_bits
        out = self.slots.ravel()
        at_count = rm * width
        at_slot = at_count + slot
        at_count += count
        next_start = best >> (shift + 1)
        prev_end = next_start - (out[at_slot] >> 32)
        last_end = self.time_limit - (out[at_count] >> 32)
        start = np.maximum(prev_end, t0)
        end = start + p
        out[at_slot] = (((2 * next_start + (next_start == end)) << shift) | slot) | ((next_start - end) << 32)
        out[at_count] = (((2 * start + (start == prev_end)) << shift) | count) | ((start - prev_end) << 32)
        np.maximum(last_end, end, out=last_end)
        count += 1
        at_count += 1
        out[at_count] = (self._sentinel_key | count) | ((self.time_limit - last_end) << 32)
        self.slot_count[rm] = count
        self.machine_available.ravel()[rm] = last_end
        return start, end

    def _shift_bounds(self, rj: np.ndarray, tj: np.ndarray, k: np.ndarray, delay: np.ndarray) -> None:
        """The job's bounds from operation k on (to its length) move by this operation's delay
        (whole numbers below 2**24 are exact in float32, so they equal the single engine's)."""
        late = np.flatnonzero(delay)  # most operations start when their job is ready
        if len(late):
            lb_rows = self.lower_bound.reshape(-1, self.n_ops)
            rows_late = rj[late]
            shifted = self._later.take(k[late], axis=0)
            if self._table_live is not None:
                shifted *= self._table_live.take(tj[late], axis=0)
            shifted *= delay[late].astype(np.float32)[:, None]
            shifted += lb_rows.take(rows_late, axis=0)
            lb_rows[rows_late] = shifted

    def _tally(
        self, envs: np.ndarray, rj: np.ndarray, op: np.ndarray, finished: np.ndarray, end: np.ndarray, every: bool
    ) -> None:
        """The per-env counts, makespans and (if tracked) bounds; finished jobs leave the mask."""
        if every:
            self.n_scheduled += 1
            np.maximum(self.makespan, end, out=self.makespan)
            self.jobs_done += finished
        else:
            self.n_scheduled[envs] += 1
            self.makespan[envs] = np.maximum(self.makespan[envs], end)
            self.jobs_done[envs] += finished
        if self.track_bound:
            bound = end + self._table_after[op]
            if every:
                np.maximum(self.lb_makespan, bound, out=self.lb_makespan)
            else:
                self.lb_makespan[envs] = np.maximum(self.lb_makespan[envs], bound)
        if finished.any():
            self.mask.ravel()[rj[finished]] = 0

    # ------------------------------------------------------------------ read-outs
    def sequences(self, i: int) -> list[list[int]]:
        """Env ``i``'s jobs in processing order on each machine (REALM's ``sequence``):
        by start, a zero-duration operation before a longer one starting with it."""
        ends = self.lower_bound[i].astype(np.int64)  # a scheduled operation's bound is its end
        durations = self.processing_time[i].astype(np.int64)
        ops = [
            (int(ends[j, k] - durations[j, k]), int(durations[j, k] > 0), j, int(self.machine[i, j, k]))
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
