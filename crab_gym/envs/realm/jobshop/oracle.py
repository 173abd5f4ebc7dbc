"""CP-SAT oracle for the job-shop problem: the reference value for instances without one.

The model is the textbook one: an interval variable per operation, precedence along each
job, ``AddNoOverlap`` per machine, and a minimised makespan. The solver's time budget and
worker count travel with every value it produces (:class:`OracleResult`), because a
"reference" found in 10 s on 2 workers is not the same claim as a proven optimum.

Shipped instances carry a plan found by this oracle offline (:mod:`.references`, built by
:mod:`.build`), so neither the env nor ``OraclePolicy`` calls it for them. For generated
instances, :func:`solve_jssp` can cache results on disk keyed by the instance data and the
budget.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import ortools
from ortools.sat.python import cp_model

from crab_gym.envs.realm.common.cache import cache_dir
from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.jobshop.model import JSSPInstance


@dataclass(frozen=True)
class OracleResult:
    """What CP-SAT found, and under which budget.

    ``makespan`` is the best schedule found (``None`` if none within the budget);
    ``lower_bound`` the proven bound; ``optimal`` whether the two meet. ``starts[j][k]`` is
    the start of operation k of job j in the best schedule.
    """

    instance: str
    makespan: int | None
    lower_bound: int
    optimal: bool
    status: str
    starts: tuple[tuple[int, ...], ...] | None
    time_limit: float
    num_workers: int
    solver: str

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["starts"] = None if self.starts is None else [list(r) for r in self.starts]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> OracleResult:
        data = dict(data)
        if data.get("starts") is not None:
            data["starts"] = tuple(tuple(r) for r in data["starts"])
        return cls(**data)


def _solver_name() -> str:
    return f"ortools-cp-sat {ortools.__version__}"


def default_cache_dir() -> Path:
    """``jssp`` under the cache root (see :mod:`crab_gym.envs.realm.common.cache`)."""
    return cache_dir("jssp")


def solve_jssp(
    instance: JSSPInstance,
    *,
    time_limit: float = 10.0,
    num_workers: int = 2,
    cache: bool | str | Path = False,
    hint: list[list[int]] | None = None,
    interleave: bool = False,
    deterministic_limit: float | None = None,
) -> OracleResult:
    """Minimise the makespan with CP-SAT within ``time_limit`` seconds on ``num_workers``.

    ``cache=True`` (or a folder) stores and reuses results keyed by the instance data and the
    budget; ``hint`` gives start times of a known schedule to warm-start the search.
    ``interleave=True`` runs CP-SAT's portfolio (LNS included) interleaved in one thread
    (``interleave_search``): on one worker it closes ta01 in about 10 s where the plain
    sequential search stays at 1299. ``deterministic_limit`` also stops the search after that
    much of CP-SAT's deterministic time: on one worker the result is then the same on every
    machine (same OR-Tools version), whatever its load, as long as ``time_limit`` is not hit.
    """
    if time_limit <= 0 or num_workers < 1:
        raise ValueError("time_limit must be > 0 and num_workers >= 1")
    cache_file = None
    if cache:
        mode = ("_i" if interleave else "") + (f"_d{deterministic_limit:g}" if deterministic_limit else "")
        cache_file = _cache_file(instance, cache, f"_t{time_limit:g}_w{num_workers}{mode}")
        cached = _cached(cache_file, instance)
        if cached is not None:
            return cached

    model, starts = _model(instance, hint)
    solver = new_solver(time_limit, num_workers, interleave_search=bool(interleave))
    if deterministic_limit:
        solver.parameters.max_deterministic_time = float(deterministic_limit)
    status = solver.Solve(model)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    result = OracleResult(
        instance=instance.name,
        makespan=int(solver.ObjectiveValue()) if found else None,
        lower_bound=int(solver.BestObjectiveBound()) if found else instance.trivial_lower_bound(),
        optimal=status == cp_model.OPTIMAL,
        status=solver.StatusName(status),
        starts=tuple(tuple(int(solver.Value(s)) for s in row) for row in starts) if found else None,
        time_limit=float(time_limit),
        num_workers=int(num_workers),
        solver=_solver_name() + (" (interleave_search)" if interleave else ""),
    )
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(result.to_dict()))
    return result


def _cache_file(instance: JSSPInstance, cache: bool | str | Path, budget: str) -> Path:
    """The cache entry of ``instance`` under ``budget`` (``cache=True``: the default folder)."""
    folder = default_cache_dir() if cache is True else Path(cache)
    return folder / f"{instance.fingerprint()}{budget}.json"


def _cached(cache_file: Path, instance: JSSPInstance) -> OracleResult | None:
    """The cached result, renamed to ``instance``; None if absent or damaged (then solved again)."""
    if not cache_file.is_file():
        return None
    try:
        result = OracleResult.from_dict(json.loads(cache_file.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged cache entry (bad bytes, bad JSON, missing keys) is solved again
    return dataclasses.replace(result, instance=instance.name)


def _model(instance: JSSPInstance, hint: list[list[int]] | None) -> tuple[cp_model.CpModel, list[list]]:
    """The textbook model (intervals, job precedences, NoOverlap per machine, min makespan)
    and its start variables by job, hinted with ``hint``'s starts if given."""
    model = cp_model.CpModel()
    horizon = sum(sum(row) for row in instance.durations)
    starts, ends = [], []
    per_machine: list[list] = [[] for _ in range(instance.n_machines)]
    for j, (drow, mrow) in enumerate(zip(instance.durations, instance.machines)):
        srow, erow = [], []
        for k, (p, mc) in enumerate(zip(drow, mrow)):
            s = model.NewIntVar(0, horizon, f"s{j}_{k}")
            e = model.NewIntVar(0, horizon, f"e{j}_{k}")
            per_machine[mc].append(model.NewIntervalVar(s, p, e, f"o{j}_{k}"))
            if erow:
                model.Add(s >= erow[-1])
            srow.append(s)
            erow.append(e)
        starts.append(srow)
        ends.append(erow)
    for intervals in per_machine:
        if len(intervals) > 1:
            model.AddNoOverlap(intervals)
    makespan = model.NewIntVar(instance.trivial_lower_bound(), horizon, "makespan")
    model.AddMaxEquality(makespan, [row[-1] for row in ends])
    model.Minimize(makespan)
    if hint is not None:
        for srow, hrow in zip(starts, hint):
            for s, h in zip(srow, hrow):
                model.AddHint(s, int(h))
    return model, starts


def with_oracle_bounds(instance: JSSPInstance, result: OracleResult) -> JSSPInstance:
    """The instance with bounds tightened by an oracle result (the literature's kept if better)."""
    data = instance.to_dict()
    if result.makespan is not None:
        ub = instance.upper_bound
        data["upper_bound"] = result.makespan if ub is None else min(ub, result.makespan)
    lb = instance.lower_bound
    data["lower_bound"] = result.lower_bound if lb is None else max(lb, result.lower_bound)
    if data.get("upper_bound") is not None and data["upper_bound"] == data["lower_bound"]:
        data["optimum"] = data["upper_bound"]
    return JSSPInstance.from_dict(data, source=instance.name)
