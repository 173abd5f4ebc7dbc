"""The instance of J2/J3/J4: jobs of any length (a job may visit a machine more than once)
and the disruptions that strike during the episode.

Units are the job-shop's time units (an operation's duration is a whole number >= 1; 0 is
allowed and never collides with anything). Machines and jobs are numbered from 0 here;
the upstream reader converts REALM-Bench's 1-based ids.

A disruption is written as REALM-Bench's types (see :data:`KINDS`); what each one does to
the shop is :func:`windows`: machines that are down and jobs that are held during
``[start, end)``. The table is in docs/jobshop.md.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.limits import MAX_QUANTITY

#: The latest time an episode may reach: the J observations show times as float32, which
#: holds whole numbers exactly only up to 2^24 (16,777,216), and their spaces are bounded by
#: this. A schedule ends at most at the latest disruption's end plus the total processing
#: time (after the last window every start is the end of another operation), so an instance
#: is refused when that sum exceeds it (:func:`check_jobs`, :func:`check_disruption`).
MAX_TIME = 16_000_000

#: The upstream disruption types and the fields each carries in crab_gym's JSON form.
KINDS: dict[str, tuple[str, ...]] = {
    "machine_breakdown": ("machine",),
    "power_outage": ("machines",),
    "emergency_shutdown": ("facility",),
    "supply_delay": ("resource", "shortage_percentage", "jobs"),
    "weather_effect": ("operations", "severity"),
    "cascading_failure": ("primary_machine", "cascading_machines"),
}


@dataclass(frozen=True)
class Disruption:
    """One disruption: its type, when it strikes (and the agent learns of it), how long it
    lasts, and its type's fields (``params``, 0-based ids)."""

    kind: str
    start: int
    duration: int
    params: tuple[tuple[str, Any], ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)

    def with_start(self, start: int) -> Disruption:
        return Disruption(self.kind, int(start), self.duration, self.params)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "start": self.start, "duration": self.duration}
        for key, value in self.params:
            out[key] = [list(v) if isinstance(v, tuple) else v for v in value] if isinstance(value, tuple) else value
        return out

    def describe(self) -> str:
        fields = ", ".join(f"{k}={v}" for k, v in self.to_dict().items() if k not in ("type", "start", "duration"))
        return f"{self.kind} at {self.start} for {self.duration} ({fields})"


@dataclass(frozen=True)
class Windows:
    """What a disruption does: ``machines`` as ``(machine, start, end)`` down-times and
    ``jobs`` as ``(job, start, end)`` holds (the job runs nothing then)."""

    machines: tuple[tuple[int, int, int], ...]
    jobs: tuple[tuple[int, int, int], ...]


def windows(d: Disruption, inst: ShopInstance) -> Windows:
    """The down-times and holds of ``d`` on ``inst`` (docs/jobshop.md, the disruption table)."""
    s, e = d.start, d.start + d.duration
    kind = d.kind
    if kind == "machine_breakdown":
        return Windows(((d.get("machine"), s, e),), ())
    if kind == "power_outage":
        return Windows(tuple((m, s, e) for m in d.get("machines")), ())
    if kind == "emergency_shutdown":
        return Windows(tuple((m, s, e) for m in range(inst.n_machines)), ())
    if kind == "cascading_failure":
        half = s + math.ceil(d.duration / 2)
        rest = tuple((m, s, half) for m in d.get("cascading_machines") if m != d.get("primary_machine"))
        return Windows(((d.get("primary_machine"), s, e), *rest), ())
    if kind == "weather_effect":
        lost = s + max(1, round(float(d.get("severity")) * d.duration))
        machines = sorted({inst.jobs[j][k][0] for j, k in d.get("operations")})
        return Windows(tuple((m, s, lost) for m in machines), ())
    if kind == "supply_delay":
        return Windows((), tuple((j, s, e) for j in supply_jobs(d, inst.n_jobs)))
    raise ValueError(f"unknown disruption type {kind!r}")


def supply_jobs(d: Disruption, n_jobs: int) -> tuple[int, ...]:
    """The jobs a supply delay holds: those it lists, else the first
    ``ceil(shortage_percentage / 100 * n_jobs)`` jobs (REALM-Bench's J2 lists none; its J4
    lists operations, which the reader turns into their jobs)."""
    listed = d.get("jobs")
    if listed:
        return tuple(listed)
    share = float(d.get("shortage_percentage") or 0.0)
    return tuple(range(min(n_jobs, max(1, math.ceil(share / 100.0 * n_jobs)))))


@dataclass(frozen=True, eq=False)
class ShopInstance:
    """A job shop with jobs of any length and a disruption schedule.

    ``jobs[j]`` is job j's chain of ``(machine, duration)``; ``disruptions`` strike in the
    episode (empty for J3). ``problem`` is ``"J2"``, ``"J3"`` or ``"J4"``.
    """

    jobs: tuple[tuple[tuple[int, int], ...], ...]
    n_machines: int
    name: str = "shop"
    problem: str = "J3"
    disruptions: tuple[Disruption, ...] = ()
    seed: int | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_jobs(self.jobs, self.n_machines, self.name)
        for i, d in enumerate(self.disruptions):
            check_disruption(d, self, f"disruptions[{i}]")

    # ------------------------------------------------------------------ shape
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def max_ops(self) -> int:
        return max(len(r) for r in self.jobs)

    @property
    def n_ops(self) -> int:
        return sum(len(r) for r in self.jobs)

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(n_jobs, max operations per job, n_machines)``: what the env's spaces depend on."""
        return (self.n_jobs, self.max_ops, self.n_machines)

    def max_duration(self) -> int:
        return max((p for r in self.jobs for _, p in r), default=0)

    def total_work(self) -> int:
        """The sum of all processing times (with the latest disruption end, the latest time
        any schedule of the instance reaches: :data:`MAX_TIME`)."""
        if "work" not in self._cache:
            self._cache["work"] = sum(p for r in self.jobs for _, p in r)
        return self._cache["work"]

    def machine_loads(self) -> list[int]:
        load = [0] * self.n_machines
        for row in self.jobs:
            for m, p in row:
                load[m] += p
        return load

    def trivial_lower_bound(self) -> int:
        """max(longest job, busiest machine): no schedule is shorter, disruptions or not."""
        return max(max(sum(p for _, p in r) for r in self.jobs), max(self.machine_loads()))

    def windows(self) -> list[Windows]:
        """Each disruption's down-times and holds, in the order of :attr:`disruptions`."""
        if "windows" not in self._cache:
            self._cache["windows"] = [windows(d, self) for d in self.disruptions]
        return self._cache["windows"]

    def with_disruptions(self, disruptions: Sequence[Disruption], name: str | None = None) -> ShopInstance:
        return ShopInstance(self.jobs, self.n_machines, name or self.name, self.problem, tuple(disruptions), self.seed)

    # ------------------------------------------------------------------ identity
    def fingerprint(self) -> str:
        """A short hash of the data (jobs, machines, disruptions; not the name)."""
        if "fingerprint" not in self._cache:
            blob = json.dumps([self.n_machines, self.jobs, [d.to_dict() for d in self.disruptions]]).encode()
            self._cache["fingerprint"] = hashlib.sha256(blob).hexdigest()[:16]
        return self._cache["fingerprint"]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShopInstance):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def __repr__(self) -> str:
        return (f"ShopInstance({self.name!r}, {self.problem}, {self.n_jobs} jobs x {self.n_machines} machines, "
                f"{self.n_ops} ops, {len(self.disruptions)} disruption(s))")

    # ------------------------------------------------------------------ JSON form
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "problem": self.problem, "machines": self.n_machines,
                               "jobs": [[[m, p] for m, p in row] for row in self.jobs],
                               "disruptions": [d.to_dict() for d in self.disruptions]}
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<dict>") -> ShopInstance:
        """crab_gym's JSON form; every problem is an :class:`InstanceFormatError` naming
        ``source`` and the field."""
        if not isinstance(data, Mapping):
            raise InstanceFormatError(source, f"expected an object, got {type(data).__name__}")
        for key in ("machines", "jobs"):
            if key not in data:
                raise InstanceFormatError(source, "missing required key", field=key)
        jobs = _jobs_from(data["jobs"], source)
        n_machines = _whole(data["machines"], source, "machines", 1)
        raw = data.get("disruptions") or []
        if not isinstance(raw, list):
            raise InstanceFormatError(source, "expected a list", field="disruptions")
        ds = tuple(disruption_from(d, source, f"disruptions[{i}]") for i, d in enumerate(raw))
        try:
            return cls(jobs, n_machines, str(data.get("name") or source), str(data.get("problem", "J3")), ds,
                       data.get("seed"))
        except InstanceFormatError as exc:
            raise InstanceFormatError(source, exc.problem, field=exc.field) from None


def _whole(value: Any, source: str, where: str, low: int, high: int = MAX_QUANTITY) -> int:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or int(value) != value or not low <= value <= high:
        raise InstanceFormatError(source, f"expected a whole number in [{low}, {high}], got {value!r}", field=where)
    return int(value)


def _jobs_from(rows: Any, source: str) -> tuple[tuple[tuple[int, int], ...], ...]:
    if not isinstance(rows, list) or not rows:
        raise InstanceFormatError(source, "expected a non-empty list of jobs", field="jobs")
    jobs = []
    for j, row in enumerate(rows):
        if not isinstance(row, list) or not row:
            raise InstanceFormatError(source, "expected a non-empty list of [machine, duration] pairs", field=f"jobs[{j}]")
        ops = []
        for k, op in enumerate(row):
            if not isinstance(op, (list, tuple)) or len(op) != 2:
                raise InstanceFormatError(source, "expected [machine, duration]", field=f"jobs[{j}][{k}]")
            ops.append((_whole(op[0], source, f"jobs[{j}][{k}][0]", 0), _whole(op[1], source, f"jobs[{j}][{k}][1]", 0, MAX_TIME)))
        jobs.append(tuple(ops))
    return tuple(jobs)


def check_jobs(jobs: Any, n_machines: int, source: str) -> None:
    """At least one job, each a non-empty chain, every machine in range, durations >= 0 and
    adding up to at most :data:`MAX_TIME`, no more machines than operations (one no operation
    uses only widens the spaces)."""
    if not jobs:
        raise InstanceFormatError(source, "an instance needs at least one job", field="jobs")
    n_ops = sum(len(row) for row in jobs)
    if n_machines > n_ops:
        raise InstanceFormatError(source, f"declares {n_machines} machines but the jobs have only {n_ops} operations",
                                  field="machines")
    for j, row in enumerate(jobs):
        if not row:
            raise InstanceFormatError(source, "a job needs at least one operation", field=f"jobs[{j}]")
        for k, (m, p) in enumerate(row):
            if not 0 <= m < n_machines:
                raise InstanceFormatError(source, f"machine {m} outside 0..{n_machines - 1}", field=f"jobs[{j}][{k}]")
            if p < 0:
                raise InstanceFormatError(source, f"negative duration {p}", field=f"jobs[{j}][{k}]")
    work = sum(p for row in jobs for _, p in row)
    if work > MAX_TIME:
        raise InstanceFormatError(source, f"the durations add up to {work:,}, above {MAX_TIME:,}: a schedule may "
                                          "last that long, and every time in the observation must stay within "
                                          f"{MAX_TIME:,} (whole numbers exact in float32)", field="jobs")


def _ids(value: Any, source: str, where: str, high: int) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        raise InstanceFormatError(source, "expected a list of ids", field=where)
    return tuple(_whole(v, source, f"{where}[{i}]", 0, high - 1) for i, v in enumerate(value))


def disruption_from(data: Any, source: str, where: str) -> Disruption:
    """A :class:`Disruption` from crab_gym's JSON form (ids are checked against the instance
    later, in :func:`check_disruption`)."""
    if not isinstance(data, Mapping):
        raise InstanceFormatError(source, "expected an object", field=where)
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in KINDS:
        raise InstanceFormatError(source, f"unknown type {kind!r}; known: {', '.join(KINDS)}", field=f"{where}.type")
    start = _whole(data.get("start"), source, f"{where}.start", 0, MAX_TIME)
    duration = _whole(data.get("duration"), source, f"{where}.duration", 1, MAX_TIME)
    params: list[tuple[str, Any]] = []
    for key in KINDS[kind]:
        value = data.get(key)
        if key in ("machines", "cascading_machines", "jobs"):
            value = _ids(value or [], source, f"{where}.{key}", MAX_QUANTITY)
        elif key == "operations":
            value = tuple(tuple(_ids(op, source, f"{where}.operations", MAX_QUANTITY)) for op in value or [])
        elif key in ("machine", "primary_machine"):
            value = _whole(value, source, f"{where}.{key}", 0)
        elif key in ("severity", "shortage_percentage"):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= (1 if key == "severity" else 100):
                raise InstanceFormatError(source, f"expected a number in range, got {value!r}", field=f"{where}.{key}")
            value = float(value)
        else:
            value = "" if value is None else str(value)
        params.append((key, value))
    return Disruption(str(kind), start, duration, tuple(params))


def check_disruption(d: Disruption, inst: ShopInstance, where: str) -> None:
    """Every id a disruption names exists in ``inst``."""
    src, m, n = inst.name, inst.n_machines, inst.n_jobs
    for key in ("machine", "primary_machine"):
        v = d.get(key)
        if v is not None and not 0 <= v < m:
            raise InstanceFormatError(src, f"machine {v} outside 0..{m - 1}", field=f"{where}.{key}")
    for key in ("machines", "cascading_machines"):
        for v in d.get(key) or ():
            if not 0 <= v < m:
                raise InstanceFormatError(src, f"machine {v} outside 0..{m - 1}", field=f"{where}.{key}")
    for v in d.get("jobs") or ():
        if not 0 <= v < n:
            raise InstanceFormatError(src, f"job {v} outside 0..{n - 1}", field=f"{where}.jobs")
    for op in d.get("operations") or ():
        if len(op) != 2 or not 0 <= op[0] < n or not 0 <= op[1] < len(inst.jobs[op[0]]):
            raise InstanceFormatError(src, f"operation {list(op)} is not a [job, operation] of this instance",
                                      field=f"{where}.operations")
    latest = MAX_TIME - inst.total_work()
    if d.start + d.duration > latest:
        raise InstanceFormatError(src, f"ends at {d.start + d.duration:,}; with {inst.total_work():,} units of "
                                       f"processing a disruption must end by {latest:,}, so that every time of the "
                                       f"episode stays within {MAX_TIME:,} (whole numbers exact in float32)",
                                  field=f"{where}.{'start' if d.start > latest else 'duration'}")
    if d.kind == "weather_effect" and not d.get("operations"):
        raise InstanceFormatError(src, "a weather effect needs at least one affected operation", field=f"{where}.operations")
    if d.kind == "power_outage" and not d.get("machines"):
        raise InstanceFormatError(src, "a power outage needs at least one machine", field=f"{where}.machines")


def merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching ``(start, end)`` spans joined, sorted (windows of several
    disruptions on one machine become one blocked stretch)."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out
