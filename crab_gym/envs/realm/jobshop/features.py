"""What a learned dispatcher sees of a P11 state: one feature row per job, and the non-delay set.

Both read only the env's observation (``processing_time``, ``machine``, ``done``,
``lower_bound``, ``machine_available``, ``action_mask``), single or batched (a leading batch
axis, as the vector env gives), so the same code serves ``gym.make``, the vector env and a
trained model playing through ``crab-gym run``.

**Non-delay candidates.** A job's next operation could start at
``est = max(job ready, machine available)`` (the machine's last end; a left-shift insertion may
start it earlier still). The non-delay set is the legal jobs whose ``est`` is the earliest of all:
no machine is left idle while an operation could start on it. The dispatching rules of the
learning-to-dispatch literature (L2D's table: SPT 25.9 %, MWKR 19.5 % on Taillard 15x15) choose
among this set; the project's rules choose among all legal jobs (SPT 56.9 %, MWKR 27.0 %).
Restricted to this set, they give SPT 25.9 % and MWKR 19.2 % (``python benchmarks/rl_jobshop.py
--rules``). The restriction can exclude every optimal schedule, but a dispatcher learns faster and
plays better inside it: the ``non_delay`` feature marks it, and the trained policies choose in it.
J2-J4 observations (jobs of different lengths, padded rows marked done) are read the same way.

**Features** (``FEATURE_NAMES``; times in units of the instance's mean operation duration, so that
instances of any size and duration range look alike): the job's legality and candidacy, its next
operation's duration and the one after, its remaining work and operations, when its next
operation could start relative to the earliest candidate, the remaining work on that machine and
how many jobs wait for it, and how close the job's completion bound is to the makespan bound.
"""

from __future__ import annotations

import numpy as np

#: The columns of :func:`job_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "non_delay",
    "next_duration",
    "second_duration",
    "remaining_work",
    "remaining_operations",
    "start_delay",
    "ready_delay",
    "machine_delay",
    "machine_remaining_work",
    "machine_queue",
    "completion_bound",
    "completion_share",
    "work_share",
    "progress",
)
N_FEATURES = len(FEATURE_NAMES)

#: Relative times are clipped to this many mean durations (then divided by it).
_HORIZON = 8.0


def _batched(obs: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], bool]:
    """The observation with a leading batch axis, and whether it had one."""
    single = np.ndim(obs["done"]) == 2
    if single:
        return {k: np.asarray(v)[None] for k, v in obs.items()}, True
    return {k: np.asarray(v) for k, v in obs.items()}, False


class _State:
    """The per-job quantities both the features and the non-delay set need (batched)."""

    def __init__(self, obs: dict[str, np.ndarray]) -> None:
        done = obs["done"].astype(bool)
        self.batch, self.n, self.m = done.shape
        # J2-J4 jobs have n_ops <= m operations; the rows' padding is marked done, duration 0
        n_ops = obs.get("n_ops")
        self.n_ops = np.full((self.batch, self.n), self.m) if n_ops is None else n_ops.astype(np.int64)
        real = np.arange(self.m)[None, None, :] < self.n_ops[:, :, None]
        self.proc = np.where(real, obs["processing_time"].astype(np.float64), 0.0)
        self.machine = obs["machine"].astype(np.int64)
        self.legal = obs["action_mask"].astype(bool)
        self.done = done | ~real
        self.n_done = (done & real).sum(axis=2)
        k = np.minimum(self.n_done, self.n_ops - 1)
        b = np.arange(self.batch)[:, None]
        j = np.arange(self.n)[None, :]
        lower = obs["lower_bound"].astype(np.float64)
        self.ready = np.where(self.n_done > 0, lower[b, j, np.maximum(self.n_done - 1, 0)], 0.0)
        self.next_machine = self.machine[b, j, k]
        self.next_duration = np.where(self.legal, self.proc[b, j, k], 0.0)
        self.machine_available = obs["machine_available"].astype(np.float64)
        self.machine_free = self.machine_available[b, self.next_machine]
        self.est = np.maximum(self.ready, self.machine_free)
        self.completion = lower[b, j, self.n_ops - 1]
        has_second = self.legal & (self.n_done + 1 < self.n_ops)
        self.second_duration = np.where(has_second, self.proc[b, j, np.minimum(k + 1, self.m - 1)], 0.0)
        operations = np.maximum(real.sum(axis=(1, 2)), 1)
        #: operations per machine (n on a square job shop): the scale of a machine's work
        self.per_machine = (operations / obs["machine_available"].shape[-1])[:, None]
        self.unit = np.maximum(self.proc.sum(axis=(1, 2)) / operations, 1e-9)[:, None]
        self.b = b

    def earliest(self) -> np.ndarray:
        """The earliest ``est`` over the legal jobs, per env (0 where none is legal)."""
        t0 = np.where(self.legal, self.est, np.inf).min(axis=1, keepdims=True)
        return np.where(np.isfinite(t0), t0, 0.0)

    def non_delay(self) -> np.ndarray:
        return self.legal & (self.est <= self.earliest())


def non_delay_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The legal jobs whose next operation can start earliest (bool, shaped like ``action_mask``)."""
    batched, single = _batched(obs)
    mask = _State(batched).non_delay()
    return mask[0] if single else mask


def job_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(n_jobs, N_FEATURES)`` float32 (a leading batch axis if ``obs`` has one); see the module doc."""
    batched, single = _batched(obs)
    s = _State(batched)
    unit, t0 = s.unit, s.earliest()
    remaining = np.where(s.done, 0.0, s.proc)
    work = remaining.sum(axis=2)
    machine_work, machine_queue = _machine_loads(s, remaining)
    completion_bound = s.completion.max(axis=1, keepdims=True)
    columns = (
        s.legal,
        s.non_delay(),
        s.next_duration / unit,
        s.second_duration / unit,
        work / (unit * s.m),
        (s.n_ops - s.n_done) / s.m,
        _relative(s.est - t0, unit),
        _relative(s.ready - t0, unit),
        _relative(s.machine_free - t0, unit),
        machine_work / (unit * s.per_machine),
        machine_queue / s.n,
        _relative(completion_bound - s.completion, unit),
        s.completion / np.maximum(completion_bound, 1e-9),
        work / np.maximum(work.max(axis=1, keepdims=True), 1e-9),
        np.broadcast_to(s.n_done.sum(axis=1, keepdims=True) / s.n_ops.sum(axis=1, keepdims=True), s.legal.shape),
    )
    features = np.stack([np.asarray(c, dtype=np.float32) for c in columns], axis=-1)
    features[~s.legal] = 0.0
    return features[0] if single else features


def _machine_loads(s: _State, remaining: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per job: the unscheduled work on its next machine, and the legal jobs whose next op is there."""
    n_machines = s.machine_available.shape[1]
    offset = (np.arange(s.batch) * n_machines)[:, None]
    flat = (s.machine + offset[:, :, None]).reshape(-1)
    work = np.bincount(flat, weights=remaining.reshape(-1), minlength=s.batch * n_machines)
    next_flat = (s.next_machine + offset).reshape(-1)
    queue = np.bincount(next_flat, weights=s.legal.reshape(-1).astype(np.float64), minlength=s.batch * n_machines)
    work = work.reshape(s.batch, n_machines)[s.b, s.next_machine]
    queue = queue.reshape(s.batch, n_machines)[s.b, s.next_machine]
    return work, queue


def _relative(delta: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """A time difference in mean durations, clipped to ``[-_HORIZON, _HORIZON]``, scaled to [-1, 1]."""
    return np.clip(delta / unit, -_HORIZON, _HORIZON) / _HORIZON
