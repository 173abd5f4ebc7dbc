"""Every problem's ``check`` role (``check(instance, plan) -> PlanCheck``) on shipped instances:
the reference plan passes at the reference's cost, plans built to break a constraint or to
name an unknown id fail, and the env, given the same plan through ``submit_plan``, agrees on
feasibility and cost."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.checks.scoring import mutate, submit
from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.index import problem_specs

#: P11's shipped set starts with the large abz instances: three small classics instead.
JSSP_NAMES = ("ft06", "la01", "la02")
#: Neighbours of the reference plan submitted to the env (numbers shifted, items moved).
NEIGHBOURS = 3


def _names(spec: Any) -> list[str]:
    """The first three shipped instances, small ones where the problem has them (fast)."""
    if spec.problem == "P11":
        return list(JSSP_NAMES)
    names = spec.part("names")()
    return [n for n in names if "_small_" in n][:3] or names[:3]


CASES = [pytest.param(spec, name, id=f"{spec.problem}-{name}") for spec in problem_specs() for name in _names(spec)]


def _case(spec: Any, name: str) -> tuple[Any, Any, Callable[[Any, Any], PlanCheck]]:
    instance = spec.part("load")(name)
    return instance, spec.part("reference")(instance), spec.part("check")


def _reference_cost(spec: Any, ref: Any) -> float:
    """What the reference plan costs: the reference value, except on P11, whose yardstick is
    the literature's best known makespan and whose plan is the stored CP-SAT schedule."""
    return ref.extra["plan_makespan"] if spec.problem == "P11" else ref.value


def _assert_env_agrees(env: gym.Env, plan: Any, verdict: PlanCheck) -> None:
    """The env refuses the plan or scores it as the checker does (feasibility and cost)."""
    outcome = submit(env, copy.deepcopy(plan), "check")
    if outcome is None:  # refused before anything ran: only a plan the checker rejects
        assert not verdict.feasible, f"the env refused a plan the check finds feasible: {plan}"
        return
    assert outcome.terminated
    assert outcome.feasible == verdict.feasible, (verdict.violations, plan)
    if "feasible" in outcome.metrics:
        assert outcome.metrics["feasible"] == verdict.feasible
    if outcome.cost is None:
        assert not math.isfinite(verdict.cost)
    else:
        assert outcome.cost == pytest.approx(verdict.cost), plan
        if isinstance(outcome.metrics.get("cost"), (int, float)):
            assert outcome.metrics["cost"] == pytest.approx(verdict.cost)


@pytest.mark.parametrize(("spec", "name"), CASES)
def test_reference_plan_passes_at_the_reference_cost(spec: Any, name: str) -> None:
    instance, ref, check = _case(spec, name)
    verdict = check(instance, copy.deepcopy(ref.plan))
    assert isinstance(verdict, PlanCheck)
    assert verdict.feasible and verdict.constraints and not verdict.violations
    assert verdict.cost == pytest.approx(_reference_cost(spec, ref))
    assert verdict.cost >= ref.value - 1e-9
    assert verdict.metrics["constraint_satisfaction"] == 1.0
    _assert_env_agrees(gym.make(spec.env_id, instance=name), ref.plan, verdict)


# ====================================================================== broken plans
def _first_route(routes: dict[str, list[Any]]) -> str:
    return next(k for k, stops in routes.items() if stops)


def _other(routes: dict[str, Any], key: str) -> str:
    return next((k for k in routes if k != key), key)


def _twice_p1(plan: dict) -> None:
    route = plan["route"]
    route.insert(-1, route[1])  # a target listed twice


def _twice_p2(plan: dict) -> None:
    a = plan["assignments"]
    first = _first_route(a)
    a[_other(a, first)].append(dict(a[first][0]))  # a group toured twice


def _drop_rides(plan: dict) -> None:
    a = plan["assignments"]
    a[_first_route(a)].pop()  # a passenger never dropped off


def _twice_wedding(plan: dict) -> None:
    r = plan["routes"]
    first = _first_route(r)
    r[_other(r, first)].append(r[first][0])  # a stop served twice


def _drop_task(plan: dict) -> None:
    plan["cooking_schedule"].pop()  # a dish never cooked


def _twice_trip(plan: dict) -> None:
    plan["trips"].append(dict(plan["trips"][0]))  # a vehicle sent twice at once


def _overproduce(plan: dict) -> None:
    plan["production"][0]["quantity"] *= 1000  # beyond the stage's capacity and stock


def _drop_job(plan: dict) -> None:
    plan["sequence"][0].pop()  # an operation never scheduled


#: A plan that breaks one of the problem's own constraints.
BREAK = {"P1": _twice_p1, "P2": _twice_p2, "P3": _drop_rides, "P4": _drop_rides, "P5": _twice_wedding,
         "P8": _twice_wedding, "P6": _drop_task, "P9": _drop_task, "P7": _twice_trip, "P10": _overproduce,
         "P11": _drop_job, "J2": _drop_job, "J3": _drop_job, "J4": _drop_job}


def _unknown_stop(plan: dict) -> None:
    routes = plan.get("assignments") or plan["routes"]
    routes[_first_route(routes)].insert(0, "pickup:nobody")


def _unknown_group(plan: dict) -> None:
    a = plan["assignments"]
    a[_first_route(a)][0]["group"] = "nobody"


def _unknown_in_first(key: str, field: str) -> Callable[[dict], None]:
    def rename(plan: dict) -> None:
        plan[key][0][field] = "nobody"
    return rename


def _unknown_location(plan: dict) -> None:
    plan["route"].insert(1, "nowhere")


def _unknown_job(plan: dict) -> None:
    plan["sequence"][0].append(999)


#: A plan naming an id the instance does not have.
UNKNOWN = {"P1": _unknown_location, "P2": _unknown_group, "P3": _unknown_stop, "P4": _unknown_stop,
           "P5": _unknown_stop, "P8": _unknown_stop, "P6": _unknown_in_first("pickups", "member"),
           "P9": _unknown_in_first("pickups", "member"), "P7": _unknown_in_first("trips", "region"),
           "P10": _unknown_in_first("orders", "supplier"), "P11": _unknown_job, "J2": _unknown_job, "J3": _unknown_job,
           "J4": _unknown_job}


@pytest.mark.parametrize("breaker", ["constraint", "unknown id"])
@pytest.mark.parametrize(("spec", "name"), CASES)
def test_broken_plan_is_infeasible_for_check_and_env(spec: Any, name: str, breaker: str) -> None:
    instance, ref, check = _case(spec, name)
    plan = copy.deepcopy(ref.plan)
    (BREAK if breaker == "constraint" else UNKNOWN)[spec.problem](plan)
    verdict = check(instance, copy.deepcopy(plan))
    assert not verdict.feasible and verdict.violations, plan
    _assert_env_agrees(gym.make(spec.env_id, instance=name), plan, verdict)


@pytest.mark.parametrize(("spec", "name"), CASES)
def test_neighbours_of_the_reference_agree_with_the_env(spec: Any, name: str) -> None:
    instance, ref, check = _case(spec, name)
    env = gym.make(spec.env_id, instance=name)
    rng = np.random.default_rng(0)
    for _ in range(NEIGHBOURS):
        plan = mutate(ref.plan, rng)
        _assert_env_agrees(env, plan, check(instance, copy.deepcopy(plan)))


@pytest.mark.parametrize(("field", "value"), [("quantity", 0), ("day", -1)])
def test_p10_entries_submit_plan_refuses_are_infeasible(field: str, value: int) -> None:
    """P10's checker alone prices a zero or negative quantity and a day before 0; the check
    refuses them as ``submit_plan`` does."""
    spec = next(s for s in problem_specs() if s.problem == "P10")
    name = _names(spec)[0]
    instance, ref, check = _case(spec, name)
    plan = copy.deepcopy(ref.plan)
    plan["production"][-1][field] = value
    verdict = check(instance, copy.deepcopy(plan))
    assert not verdict.feasible and verdict.violations == ["plan_shape"]
    _assert_env_agrees(gym.make(spec.env_id, instance=name), plan, verdict)
    assert submit(gym.make(spec.env_id, instance=name), plan, "check") is None
