"""The job-shop instance model shared by the parsers, the library, the oracle and the env.

An instance is ``n_jobs`` jobs, each a chain of ``n_ops`` operations; operation ``k`` of
job ``j`` runs on machine ``machines[j][k]`` for ``durations[j][k]`` time units, machines
numbered from 0. The matrices are kept as tuples of tuples so that an instance is immutable,
hashable and cheap to read from pure Python (the schedule engine's hot loop).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, MAX_SEED, is_number, too_large

ReferenceKind = Literal["optimum", "upper_bound", "lower_bound"]


def _as_matrix(values: Any, what: str, source: str) -> tuple[tuple[int, ...], ...]:
    """Integer matrix as tuples; rejects non-integral numbers instead of truncating them, and
    numbers beyond :data:`~crab_gym.envs.realm.common.limits.MAX_QUANTITY` (they overflow the solver)."""
    if isinstance(values, np.ndarray):
        values = values.tolist()
    plain = _plain_int_matrix(values)
    if plain is not None:
        return plain
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise InstanceFormatError(source, f"must be a matrix of integers, got {type(values).__name__}", field=what)
    rows = []
    for j, row in enumerate(values):
        if isinstance(row, np.ndarray):
            row = row.tolist()
        if not isinstance(row, (list, tuple)):
            raise InstanceFormatError(
                source, f"expected a list of integers, got {type(row).__name__}", field=f"{what}[{j}]"
            )
        out = []
        for k, v in enumerate(row):
            if isinstance(v, np.generic):
                v = v.item()
            if not is_number(v) or too_large(v) or int(v) != v:
                shown = repr(v) if len(repr(v)) <= 24 else f"{repr(v)[:20]}..."
                why = "too large" if is_number(v) and int(v) == v else "not an integer"
                raise InstanceFormatError(source, f"{shown} is {why}", field=f"{what}[{j}][{k}]")
            out.append(int(v))
        rows.append(tuple(out))
    return tuple(rows)


def _plain_int_matrix(values: Any) -> tuple[tuple[int, ...], ...] | None:
    """The matrix as tuples when it is already rows of plain ``int`` within the limit (a generated
    instance: the common case, checked without a Python call per number); None otherwise."""
    if not isinstance(values, (list, tuple)) or not all(type(row) in (list, tuple) for row in values):
        return None
    rows = tuple(tuple(row) for row in values)
    if not all(type(v) is int for row in rows for v in row):
        return None
    if rows and any(row for row in rows) and max(max(map(abs, row), default=0) for row in rows) > MAX_QUANTITY:
        return None
    return rows


def _whole(value: Any, source: str, field: str, low: int, high: int = MAX_QUANTITY) -> int:
    """A whole number in ``low..high`` (integral floats accepted, strings and bools not)."""
    if isinstance(value, np.generic):
        value = value.item()
    try:
        ok = is_number(value) and math.isfinite(value) and int(value) == value and low <= value <= high
    except OverflowError:  # an int too large for a float
        ok = False
    if not ok:
        shown = repr(value) if len(repr(value)) <= 24 else f"{repr(value)[:20]}..."
        raise InstanceFormatError(source, f"expected a whole number in [{low}, {high}], got {shown}", field=field)
    return int(value)


def _file_field(field: str | None) -> str | None:
    """A model field as written in the project's JSON form (``ops`` interleaves machines and
    durations: ``durations[0][1]`` is ``ops[0][3]``)."""
    if field is None:
        return None
    m = re.fullmatch(r"(durations|machines)\[(\d+)\](?:\[(\d+)\])?", field)
    if m:
        kind, j, k = m.group(1), int(m.group(2)), m.group(3)
        if k is None:
            return f"ops[{j}]"
        return f"ops[{j}][{2 * int(k) + (1 if kind == 'durations' else 0)}]"
    return {"durations": "ops", "n_machines": "machines"}.get(field, field)


def refiled(
    exc: InstanceFormatError, source: str, *, line: int | None = None, json_fields: bool = False
) -> InstanceFormatError:
    """``exc`` (raised by the model, naming the instance) re-aimed at the file ``source``.

    ``json_fields`` maps the model's fields to the project's JSON form (``durations[0][1]``
    -> ``ops[0][3]``, the duration of job 0's operation 1); ``line`` is set for text formats.
    """
    field, problem = exc.field, exc.problem
    if json_fields and field is not None:
        m = re.fullmatch(r"(durations|machines)\[(\d+)\]\[(\d+)\]", field)
        if m:
            what = "duration" if m.group(1) == "durations" else "machine"
            problem += f" (the {what} of job {m.group(2)}, operation {m.group(3)})"
        field = _file_field(field)
    return InstanceFormatError(source, problem, field=field, line=line if line is not None else exc.line)


def _check_rows(d: tuple[tuple[int, ...], ...], mc: tuple[tuple[int, ...], ...], src: str) -> None:
    """At least one job, every job the same number (>= 1) of operations, no negative duration."""
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


def _machine_count(
    n_machines: int | None, d: tuple[tuple[int, ...], ...], mc: tuple[tuple[int, ...], ...], src: str
) -> int:
    """The machine count (declared, else the highest machine used + 1), every machine in range."""
    n_mach = n_machines
    top = max(max(row) for row in mc) + 1
    if n_mach is None:
        n_mach = top
    n_ops_total = len(d) * len(d[0])
    n_mach = _whole(n_mach, src, "n_machines", 1)
    if n_mach > max(top, n_ops_total):  # machines no operation could use: a typo, and big arrays
        raise InstanceFormatError(
            src, f"{n_mach} machines declared but the jobs have only {n_ops_total} operations", field="n_machines"
        )
    for j, mrow in enumerate(mc):
        for k, v in enumerate(mrow):
            if not 0 <= v < n_mach:
                raise InstanceFormatError(
                    src, f"machine {v} outside 0..{n_mach - 1}", field=f"machines[{j}][{k}]"
                )
    return n_mach


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
        _check_rows(d, mc, src)
        object.__setattr__(self, "n_machines", _machine_count(self.n_machines, d, mc, src))
        self._check_known_values()

    def _check_known_values(self) -> None:
        """Bounds and seeds as whole numbers, the citation as text, and the bounds consistent
        with each other and with :meth:`trivial_lower_bound` (the matrices are checked first)."""
        src = self.name
        tlb = self.trivial_lower_bound()
        low = 1 if tlb >= 1 else 0  # only an instance whose durations are all 0 has bounds of 0
        for key in ("optimum", "upper_bound", "lower_bound"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, _whole(value, src, key, low))
        for key in ("time_seed", "machine_seed"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, _whole(value, src, key, 1, MAX_SEED))
        if self.citation is not None and not isinstance(self.citation, str):
            raise InstanceFormatError(src, f"expected text, got {type(self.citation).__name__}", field="citation")
        lb, ub, opt = self.lower_bound, self.upper_bound, self.optimum
        for key, value in (("optimum", opt), ("upper_bound", ub)):
            if value is not None and value < tlb:
                raise InstanceFormatError(
                    src,
                    f"{value} is below the instance's trivial lower bound {tlb} (the longest job or the "
                    f"busiest machine): no schedule is that short",
                    field=key,
                )
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

    def _frozen_array(self, key: str, rows: tuple[tuple[int, ...], ...]) -> np.ndarray:
        """``rows`` as a read-only int64 array, built once per instance."""
        if key not in self._cache:
            arr = np.asarray(rows, dtype=np.int64)
            arr.flags.writeable = False
            self._cache[key] = arr
        return self._cache[key]

    def durations_array(self) -> np.ndarray:
        return self._frozen_array("d", self.durations)

    def machines_array(self) -> np.ndarray:
        return self._frozen_array("m", self.machines)

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
        """A short hash of the data (not the name or bounds): a key for oracle caches and the
        stored plans; computed once per instance (the instance is immutable)."""
        if "fingerprint" not in self._cache:
            blob = json.dumps([self.n_machines, self.durations, self.machines]).encode()
            self._cache["fingerprint"] = hashlib.sha256(blob).hexdigest()[:16]
        return self._cache["fingerprint"]

    def same_data(self, other: JSSPInstance) -> bool:
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
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> JSSPInstance:
        """An instance from the project's JSON form; every problem is an
        :class:`InstanceFormatError` naming ``source`` and the field as written in the file
        (``ops[2][3]`` is the duration of job 2's operation 1)."""
        if not isinstance(data, dict):
            raise InstanceFormatError(source, f"expected an object, got {type(data).__name__}")
        known = {"name", "jobs", "machines", "ops", "optimum", "upper_bound", "lower_bound",
                 "citation", "time_seed", "machine_seed"}
        extra = set(data) - known
        if extra:
            raise InstanceFormatError(
                source, f"unknown key; expected only {', '.join(sorted(known))}", field=str(sorted(map(str, extra))[0])
            )
        for key in ("jobs", "machines", "ops"):
            if key not in data:
                raise InstanceFormatError(source, "missing required key", field=key)
        n_jobs = _whole(data["jobs"], source, "jobs", 1)
        n_machines = _whole(data["machines"], source, "machines", 1)
        ops = data["ops"]
        if not isinstance(ops, list):
            raise InstanceFormatError(source, f"expected a list of job rows, got {type(ops).__name__}", field="ops")
        if len(ops) != n_jobs:
            raise InstanceFormatError(
                source, f"expected {n_jobs} job rows (as 'jobs' says), got {len(ops)}", field="ops"
            )
        durations, machines = [], []
        for j, row in enumerate(ops):
            if not isinstance(row, list) or not row or len(row) % 2:
                raise InstanceFormatError(
                    source, "expected a non-empty list of machine, duration pairs", field=f"ops[{j}]"
                )
            machines.append(row[0::2])
            durations.append(row[1::2])
        for key in ("name", "citation"):
            if data.get(key) is not None and not isinstance(data[key], str):
                raise InstanceFormatError(source, f"expected text, got {type(data[key]).__name__}", field=key)
        try:
            return cls(
                durations=durations,
                machines=machines,
                name=str(data.get("name") or source),
                n_machines=n_machines,
                optimum=data.get("optimum"),
                upper_bound=data.get("upper_bound"),
                lower_bound=data.get("lower_bound"),
                citation=data.get("citation"),
                time_seed=data.get("time_seed"),
                machine_seed=data.get("machine_seed"),
            )
        except InstanceFormatError as exc:
            raise refiled(exc, source, json_fields=True) from None

    @classmethod
    def from_matrices(
        cls, durations: Sequence[Sequence[int]], machines: Sequence[Sequence[int]], **kwargs: Any
    ) -> JSSPInstance:
        return cls(durations=durations, machines=machines, **kwargs)
