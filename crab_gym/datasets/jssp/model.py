"""The job-shop instance model shared by the parsers, the library, the oracle and the env.

An instance is ``n_jobs`` jobs, each a chain of ``n_ops`` operations; operation ``k`` of
job ``j`` runs on machine ``machines[j][k]`` for ``durations[j][k]`` time units, machines
numbered from 0. The matrices are kept as tuples of tuples so that an instance is immutable,
hashable and cheap to read from pure Python (the schedule engine's hot loop).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

import numpy as np

from crab_gym.datasets.errors import InstanceFormatError

ReferenceKind = Literal["optimum", "upper_bound", "lower_bound"]


def _as_matrix(values: Any, what: str, source: str) -> tuple[tuple[int, ...], ...]:
    """Integer matrix as tuples; rejects non-integral numbers instead of truncating them."""
    if isinstance(values, np.ndarray):
        values = values.tolist()
    rows = []
    try:
        for j, row in enumerate(values):
            out = []
            for k, v in enumerate(row):
                if isinstance(v, bool) or int(v) != v:
                    raise InstanceFormatError(source, f"{v!r} is not an integer", field=f"{what}[{j}][{k}]")
                out.append(int(v))
            rows.append(tuple(out))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InstanceFormatError):
            raise
        raise InstanceFormatError(source, f"must be a matrix of integers ({exc})", field=what) from None
    return tuple(rows)


@dataclass(frozen=True, eq=False)
class JSSPInstance:
    """A job-shop scheduling instance with its known bounds (``None`` where unknown).

    ``optimum`` is set only when it is proven; ``upper_bound`` is the best known makespan and
    ``lower_bound`` the best proven bound. ``citation`` names the instance's origin.
    """

    durations: tuple[tuple[int, ...], ...]
    machines: tuple[tuple[int, ...], ...]
    name: str = "jssp"
    n_machines: int | None = None
    optimum: int | None = None
    upper_bound: int | None = None
    lower_bound: int | None = None
    citation: str | None = None
    time_seed: int | None = None
    machine_seed: int | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        src = self.name
        d = _as_matrix(self.durations, "durations", src)
        mc = _as_matrix(self.machines, "machines", src)
        object.__setattr__(self, "durations", d)
        object.__setattr__(self, "machines", mc)
        if not d:
            raise InstanceFormatError(src, "an instance needs at least one job", field="durations")
        n_ops = len(d[0])
        if n_ops == 0:
            raise InstanceFormatError(src, "a job needs at least one operation", field="durations[0]")
        if len(mc) != len(d):
            raise InstanceFormatError(
                src, f"{len(mc)} machine rows for {len(d)} jobs", field="machines"
            )
        for j, (drow, mrow) in enumerate(zip(d, mc)):
            if len(drow) != n_ops or len(mrow) != n_ops:
                raise InstanceFormatError(
                    src,
                    f"job {j} has {len(drow)} durations and {len(mrow)} machines; "
                    f"every job needs {n_ops} operations",
                    field=f"durations[{j}]",
                )
            for k, v in enumerate(drow):
                if v < 0:
                    raise InstanceFormatError(src, f"negative duration {v}", field=f"durations[{j}][{k}]")
        n_mach = self.n_machines
        top = max(max(row) for row in mc) + 1
        if n_mach is None:
            n_mach = top
        object.__setattr__(self, "n_machines", int(n_mach))
        for j, mrow in enumerate(mc):
            for k, v in enumerate(mrow):
                if not 0 <= v < n_mach:
                    raise InstanceFormatError(
                        src, f"machine {v} outside 0..{n_mach - 1}", field=f"machines[{j}][{k}]"
                    )
        for key in ("optimum", "upper_bound", "lower_bound", "time_seed", "machine_seed"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, int(value))
        lb, ub, opt = self.lower_bound, self.upper_bound, self.optimum
        if lb is not None and ub is not None and lb > ub:
            raise InstanceFormatError(src, f"lower bound {lb} exceeds upper bound {ub}", field="lower_bound")
        if opt is not None and ((lb is not None and opt < lb) or (ub is not None and opt > ub)):
            raise InstanceFormatError(src, f"optimum {opt} outside bounds [{lb}, {ub}]", field="optimum")

    # ------------------------------------------------------------------ shape
    @property
    def n_jobs(self) -> int:
        return len(self.durations)

    @property
    def n_ops(self) -> int:
        """Operations per job (every job has the same number)."""
        return len(self.durations[0])

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_jobs, n_ops)``: the shape of the per-operation observation arrays."""
        return (self.n_jobs, self.n_ops)

    def durations_array(self) -> np.ndarray:
        if "d" not in self._cache:
            arr = np.asarray(self.durations, dtype=np.int64)
            arr.flags.writeable = False
            self._cache["d"] = arr
        return self._cache["d"]

    def machines_array(self) -> np.ndarray:
        if "m" not in self._cache:
            arr = np.asarray(self.machines, dtype=np.int64)
            arr.flags.writeable = False
            self._cache["m"] = arr
        return self._cache["m"]

    # ------------------------------------------------------------------ bounds
    def trivial_lower_bound(self) -> int:
        """max(longest job, busiest machine): a bound every schedule respects."""
        load = [0] * self.n_machines
        for drow, mrow in zip(self.durations, self.machines):
            for p, m in zip(drow, mrow):
                load[m] += p
        return max(max(sum(r) for r in self.durations), max(load))

    @property
    def reference(self) -> tuple[int, ReferenceKind]:
        """The makespan an agent is measured against, and what kind of value it is.

        The proven optimum if known, else the best known upper bound, else the best lower
        bound (the literature's, or :meth:`trivial_lower_bound`). Measuring against a lower
        bound understates the agent's optimality ratio, never overstates it.
        """
        if self.optimum is not None:
            return self.optimum, "optimum"
        if self.upper_bound is not None:
            return self.upper_bound, "upper_bound"
        if self.lower_bound is not None:
            return max(self.lower_bound, self.trivial_lower_bound()), "lower_bound"
        return self.trivial_lower_bound(), "lower_bound"

    # ------------------------------------------------------------------ identity
    def fingerprint(self) -> str:
        """A short hash of the data (not the name or bounds): a key for oracle caches."""
        blob = json.dumps([self.n_machines, self.durations, self.machines]).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def same_data(self, other: "JSSPInstance") -> bool:
        return (
            self.durations == other.durations
            and self.machines == other.machines
            and self.n_machines == other.n_machines
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JSSPInstance):
            return NotImplemented
        return self.same_data(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.durations, self.machines))

    def __repr__(self) -> str:
        ref, kind = self.reference
        return f"JSSPInstance({self.name!r}, {self.n_jobs}x{self.n_machines}, {kind}={ref})"

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        """The project's JSON form: each job a flat ``[machine, duration, ...]`` list."""
        out: dict[str, Any] = {
            "name": self.name,
            "jobs": self.n_jobs,
            "machines": self.n_machines,
            "ops": [
                [v for pair in zip(mrow, drow) for v in pair]
                for mrow, drow in zip(self.machines, self.durations)
            ],
        }
        for key in ("optimum", "upper_bound", "lower_bound", "citation", "time_seed", "machine_seed"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> "JSSPInstance":
        if not isinstance(data, dict):
            raise InstanceFormatError(source, f"expected an object, got {type(data).__name__}")
        for key in ("jobs", "machines", "ops"):
            if key not in data:
                raise InstanceFormatError(source, "missing", field=key)
        ops = data["ops"]
        if not isinstance(ops, list) or len(ops) != data["jobs"]:
            raise InstanceFormatError(source, f"expected {data['jobs']} job rows", field="ops")
        durations, machines = [], []
        for j, row in enumerate(ops):
            if not isinstance(row, list) or len(row) % 2:
                raise InstanceFormatError(source, "expected machine, duration pairs", field=f"ops[{j}]")
            machines.append(row[0::2])
            durations.append(row[1::2])
        known = {"name", "jobs", "machines", "ops", "optimum", "upper_bound", "lower_bound",
                 "citation", "time_seed", "machine_seed"}
        extra = set(data) - known
        if extra:
            raise InstanceFormatError(source, f"unknown keys {sorted(extra)}")
        return cls(
            durations=durations,
            machines=machines,
            name=str(data.get("name", source)),
            n_machines=int(data["machines"]),
            optimum=data.get("optimum"),
            upper_bound=data.get("upper_bound"),
            lower_bound=data.get("lower_bound"),
            citation=data.get("citation"),
            time_seed=data.get("time_seed"),
            machine_seed=data.get("machine_seed"),
        )

    @classmethod
    def from_matrices(
        cls, durations: Sequence[Sequence[int]], machines: Sequence[Sequence[int]], **kwargs: Any
    ) -> "JSSPInstance":
        return cls(durations=durations, machines=machines, **kwargs)
