"""References: the yardstick of every REALM instance, one record type for every problem.

A reference is the plan an oracle found for an instance, the plan's value, and how it was found
(solver, status, proven bound, time limit, workers). Shipped instances carry theirs in the
family's ``instances/references.json`` (``reset()`` never waits for a solver on them); any
other instance is solved once, on demand, and the record is cached on disk, keyed by the
instance's fingerprint (:func:`stored_reference`).

The optimality metric is :func:`optimality_ratio`: ``reference value / agent cost`` in [0, 1],
0 for an infeasible plan. It is written once, here.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.cache import cache_dir

#: Solver statuses whose plan meets every constraint.
FEASIBLE_STATUSES = frozenset({"OPTIMAL", "FEASIBLE", "ROUTING_SUCCESS", "ROUTING_OPTIMAL",
                               "ROUTING_PARTIAL_SUCCESS_LOCAL_OPTIMUM_NOT_REACHED", "GIVEN", "PLAN",
                               "OPTIMAL_BY_CONSTRUCTION"})  # an instance built around a plan meeting its bound

#: Keys of a stored record that the :class:`Reference` fields hold; the rest go to ``extra``.
_FIELDS = ("value", "status", "bound", "solver", "time_limit_s", "workers", "plan", "fingerprint")


@dataclass(frozen=True)
class Reference:
    """The reference of one instance.

    Attributes:
        value: the reference plan's cost in the problem's units (None: no feasible plan).
        status: the solver's status (``"OPTIMAL"``, ``"FEASIBLE"``, ``"ROUTING_SUCCESS"``, ...;
            ``"GIVEN"`` for a value passed to the env, ``"LOWER_BOUND"`` when only a bound is known,
            ``"OPTIMAL_BY_CONSTRUCTION"`` for an instance built around a plan that meets its bound).
        bound: the best bound proven on the optimum, if any.
        solver: what produced the plan (solver and strategy).
        time_limit_s: the solver's time budget in seconds.
        workers: the solver's worker count.
        plan: the plan, as the family's ``submit_plan`` arguments (what ``OraclePolicy`` submits).
        source: ``"shipped"``, ``"cache"``, ``"solved"``, ``"argument"`` (given to the env) or
            ``"instance"`` (values the instance file carries, e.g. a job-shop optimum) or
            ``"constructed"`` (known by construction, no solver ran).
        fingerprint: the instance data's fingerprint the record belongs to.
        extra: problem-specific facts (P4's adaptive re-solve, P11's literature values, ...).
    """

    value: float | None
    status: str
    bound: float | None = None
    solver: str = ""
    time_limit_s: float | None = None
    workers: int | None = None
    plan: Any = None
    source: str = "shipped"
    fingerprint: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def feasible(self) -> bool:
        """Whether the reference plan meets every constraint (its value is a cost to beat)."""
        return self.value is not None and (self.status in FEASIBLE_STATUSES or self.status.startswith("ADAPTIVE"))

    @property
    def measure(self) -> float | None:
        """The value an agent's cost is measured against (:func:`optimality_ratio`): the
        feasible plan's value, or a lower bound (it understates the ratio, never overstates
        it); None when neither is known."""
        return self.value if self.feasible or self.status == "LOWER_BOUND" else None

    @classmethod
    def from_record(cls, record: Mapping[str, Any], source: str | None = None) -> Reference:
        """A reference from a stored JSON record (unknown keys are kept in ``extra``)."""
        value = record.get("value")
        bound = record.get("bound")
        return cls(
            value=None if value is None else float(value),
            status=str(record.get("status", "UNKNOWN")),
            bound=None if bound is None else float(bound),
            solver=str(record.get("solver", "")),
            time_limit_s=record.get("time_limit_s"),
            workers=record.get("workers"),
            plan=record.get("plan"),
            source=source or str(record.get("source", "shipped")),
            fingerprint=str(record.get("fingerprint", "")),
            extra={k: v for k, v in record.items() if k not in (*_FIELDS, "source")},
        )

    @classmethod
    def given(cls, value: float) -> Reference:
        """A reference value the user passed (``reference=`` of an env)."""
        return cls(value=float(value), status="GIVEN", source="argument")

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-compatible data (the form ``references.json`` stores)."""
        out = {k: getattr(self, k) for k in _FIELDS}
        out["source"] = self.source
        out.update(self.extra)
        return out


def optimality_ratio(reference: float | None, cost: float | None, feasible: bool = True) -> float:
    """``reference / cost`` clipped to [0, 1]: 1 at (or below) the reference cost, 0 for an
    infeasible plan. Without a reference value a feasible plan scores 1 (nothing to beat)."""
    if not feasible or cost is None or not math.isfinite(cost):
        return 0.0
    if reference is None or cost <= 0 or cost <= reference:
        return 1.0
    return max(0.0, min(1.0, float(reference) / float(cost)))


def normalised_optimality(best: float | None, cost: float | None, feasible: bool, baseline: float) -> float:
    """``(baseline - cost) / (baseline - best)`` clipped to [0, 1]: the share of the avoidable
    cost (from a trivial ``baseline`` plan, e.g. doing nothing, down to the ``best`` known
    plan) that the plan avoids. 0 for an infeasible plan and for the baseline itself, 1 at (or
    below) the best known cost, linear in between, so a cheaper plan never scores lower.

    For problems whose objective has a large part no plan avoids (unavoidable shortfall,
    cooking time), where ``best / cost`` would give doing nothing a high score. With nothing
    avoidable (``baseline <= best``) a feasible plan scores 1 if it costs no more than
    ``best``, else 0; without a ``best``, 1 if it costs less than the baseline, else 0."""
    if not feasible or cost is None or not math.isfinite(cost):
        return 0.0
    if best is None:
        return 1.0 if cost < baseline else 0.0
    gain = float(baseline) - float(best)
    if gain <= 0:
        return 1.0 if cost <= best else 0.0
    return max(0.0, min(1.0, (float(baseline) - float(cost)) / gain))


#: How an env reports a metric that does not apply to an episode (adaptation when no
#: disruption struck before it ended; coordination of a single actor's problem): the key
#: stays in ``info["metrics"]`` (an env's keys are fixed) with this value, and reports show
#: ``n/a`` and leave it out of their means. Never 1.0.
NOT_APPLICABLE = None


@cache
def _shipped_records(path: str) -> dict[str, dict[str, Any]]:
    file = Path(path)
    if not file.is_file():
        return {}
    doc = json.loads(file.read_text(encoding="utf-8"))
    return doc["instances"] if isinstance(doc, dict) and "instances" in doc else doc


def shipped_records(instance_dir: Path) -> dict[str, dict[str, Any]]:
    """The records of ``instance_dir/references.json`` by instance name ({} when absent)."""
    return _shipped_records(str(Path(instance_dir) / "references.json"))


class SolvePending(Exception):  # noqa: N818 - a signal, not an error: the solve is waiting
    """A solve was asked for while solves are deferred (:func:`deferring_solves`): the caller
    goes on without its answer and marks what needs it as pending."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: its solve is deferred (not shipped, not cached)")
        self.what = what


_DEFERRED: contextvars.ContextVar[bool] = contextvars.ContextVar("crab_gym_solves_deferred", default=False)


@contextlib.contextmanager
def deferring_solves(defer: bool = True) -> Iterator[None]:
    """Inside, a reference or baseline that is neither shipped nor cached raises
    :class:`SolvePending` instead of running a solver: an env's ``step()`` and ``reset()``
    run so, and the evaluation runner solves afterwards (``finish_metrics()``)."""
    token = _DEFERRED.set(defer)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def solves_deferred() -> bool:
    """Whether a solve asked for now would be deferred (:func:`deferring_solves`)."""
    return _DEFERRED.get()


def stored_reference(
    problem: str,
    instance: Any,
    instance_dir: Path,
    solve: Callable[[Any], Mapping[str, Any]],
) -> Reference:
    """The reference of ``instance``: shipped (same name and fingerprint), else cached on
    disk, else ``solve(instance)`` (a JSON record) run now and cached for next time. While
    solves are deferred, anything but a shipped record raises :class:`SolvePending`: a cached
    record stands for a solve, so what a deferred env reports never depends on the cache."""
    fp = instance.fingerprint()
    shipped = shipped_records(instance_dir).get(getattr(instance, "name", ""))
    if shipped is not None and shipped.get("fingerprint") == fp:
        return Reference.from_record(shipped, "shipped")
    if solves_deferred():  # a cached record counts as a solve: the reward never depends on the cache
        raise SolvePending(f"{problem} {fp[:12]}")
    path = cache_dir() / "realm" / problem / f"{fp}.json"
    if path.is_file():
        try:
            return Reference.from_record(json.loads(path.read_text(encoding="utf-8")), "cache")
        except (OSError, ValueError, TypeError):
            pass  # a damaged cache entry is solved again
    record = {**solve(instance), "fingerprint": fp}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as fh:
            json.dump(record, fh)
        os.replace(fh.name, path)
    except OSError:
        pass  # a read-only home only costs a re-solve next time
    return Reference.from_record(record, "solved")
