"""CP-SAT oracle for the job-shop problem: the reference value for instances without one.

The model is the textbook one: an interval variable per operation, precedence along each
job, ``AddNoOverlap`` per machine, and a minimised makespan. The solver's time budget and
worker count travel with every value it produces (the common
:class:`~crab_gym.envs.realm.common.oracle_result.OracleResult`), because a "reference"
found in 10 s on 2 workers is not the same claim as a proven optimum.

A result's ``plan`` is ``{"sequence": [[job, ...] per machine]}`` (the ``submit_plan``
shape) and its ``cost`` the makespan of that plan's semi-active schedule, as
:func:`~crab_gym.envs.realm.jobshop.checker.check` prices it: never more than CP-SAT's own
makespan (``detail["solver_makespan"]``), the same when the schedule is proven optimal.
``bound`` is the proven lower bound (the trivial one when nothing was found); ``detail``
also holds CP-SAT's ``starts`` (``starts[j][k]``: operation k of job j) and the
``instance`` name. The result is optimal when ``status == "OPTIMAL"``.

Shipped instances carry a plan found by this oracle offline (:mod:`.references`, built by
:mod:`.build`), so neither the env nor ``OraclePolicy`` calls it for them. For generated
instances, :func:`solve_jssp` can cache results on disk keyed by the instance data and the
budget (:func:`result_record` / :func:`result_from_record`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ortools
from ortools.sat.python import cp_model

from crab_gym.envs.realm.common.cache import cache_dir
from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.jobshop.checker import plan_makespan
from crab_gym.envs.realm.jobshop.model import JSSPInstance

__all__ = ["OracleResult", "default_cache_dir", "result_from_record", "result_record", "sequence_from_starts",
           "solve_jssp", "with_oracle_bounds"]


def _solver_name() -> str:
    return f"ortools-cp-sat {ortools.__version__}"


def default_cache_dir() -> Path:
    """``jssp`` under the cache root (see :mod:`crab_gym.envs.realm.common.cache`)."""
    return cache_dir("jssp")


def sequence_from_starts(instance: JSSPInstance, starts: Sequence[Sequence[int]]) -> list[list[int]]:
    """Machine orders (REALM ``sequence``) of a feasible schedule given by start times.

    Operations are ordered by (start, positive duration, job, operation): a linear extension
    of the job chains even with zero-length operations sharing a start, so the machine orders
    never deadlock and their semi-active schedule ends no later than the given one.
    """
    ops = sorted(
        (starts[j][k], instance.durations[j][k] > 0, j, k)
        for j in range(instance.n_jobs)
        for k in range(instance.n_ops)
    )
    per_machine: list[list[int]] = [[] for _ in range(instance.n_machines)]
    for _, _, j, k in ops:
        per_machine[instance.machines[j][k]].append(j)
    return per_machine


def _result(instance: JSSPInstance, found: Mapping[str, Any], *, time_limit: float, workers: int, solver: str,
            seconds: float = 0.0) -> OracleResult:
    """The common result of a solve whose ``found`` holds ``makespan``, ``bound``, ``status``
    and ``starts`` (makespan and starts None when nothing was found)."""
    starts = None if found["starts"] is None else [[int(s) for s in row] for row in found["starts"]]
    sequence = None if starts is None else sequence_from_starts(instance, starts)
    return OracleResult(
        cost=None if sequence is None else plan_makespan(instance, sequence),
        status=found["status"],
        plan=None if sequence is None else {"sequence": sequence},
        bound=int(found["bound"]),
        time_limit_s=float(time_limit),
        workers=int(workers),
        solver=solver,
        solve_seconds=seconds,
        detail={"instance": instance.name, "starts": starts, "solver_makespan": found["makespan"]},
    )


def result_record(result: OracleResult) -> dict[str, Any]:
    """The JSON record of a result in the on-disk cache (no wall-clock value)."""
    return {"cost": result.cost, "status": result.status, "bound": result.bound, "time_limit_s": result.time_limit_s,
            "workers": result.workers, "solver": result.solver, "plan": result.plan, "detail": dict(result.detail)}


def result_from_record(data: Mapping[str, Any], instance: JSSPInstance) -> OracleResult:
    """The result a cache record holds, for ``instance`` (its name replaces the recorded one).

    A record of the former P11-only result (``makespan``, ``lower_bound``, ``starts``,
    ``time_limit``, ``num_workers``: caches written before the common type) is read too,
    its plan rebuilt from its starts: the same result a solve then gives now.
    """
    if "makespan" in data:  # the former shape
        found = {"makespan": data["makespan"], "bound": data["lower_bound"], "status": data["status"],
                 "starts": data["starts"]}
        return _result(instance, found, time_limit=data["time_limit"], workers=data["num_workers"],
                       solver=data["solver"])
    detail = {**data["detail"], "instance": instance.name}
    return OracleResult(data["cost"], data["status"], data["plan"], bound=data["bound"],
                        time_limit_s=data["time_limit_s"], workers=data["workers"], solver=data["solver"],
                        detail=detail)


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
    ok = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    found = {
        "makespan": int(solver.ObjectiveValue()) if ok else None,
        "bound": int(solver.BestObjectiveBound()) if ok else instance.trivial_lower_bound(),
        "status": solver.StatusName(status),
        "starts": [[solver.Value(s) for s in row] for row in starts] if ok else None,
    }
    result = _result(instance, found, time_limit=time_limit, workers=num_workers, seconds=solver.WallTime(),
                     solver=_solver_name() + (" (interleave_search)" if interleave else ""))
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(result_record(result)))
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
        return result_from_record(json.loads(cache_file.read_text(encoding="utf-8")), instance)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # a damaged cache entry (bad bytes, bad JSON, missing keys) is solved again


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
    """The instance with bounds tightened by an oracle result (the literature's kept if better):
    its plan's makespan an upper bound, its proven ``bound`` a lower one."""
    data = instance.to_dict()
    if result.cost is not None:
        ub, cost = instance.upper_bound, int(result.cost)
        data["upper_bound"] = cost if ub is None else min(ub, cost)
    lb, bound = instance.lower_bound, int(result.bound if result.bound is not None else instance.trivial_lower_bound())
    data["lower_bound"] = bound if lb is None else max(lb, bound)
    if data.get("upper_bound") is not None and data["upper_bound"] == data["lower_bound"]:
        data["optimum"] = data["upper_bound"]
    return JSSPInstance.from_dict(data, source=instance.name)
