"""The one oracle result type (common.oracle_result), its record (common.oracle_record), and
every family's oracle returning it, priced as the family's checker prices its plan."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import ortools
import pytest

from crab_gym.envs.realm.common.oracle_record import oracle_record
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.index import problem_spec


def test_feasible_follows_the_status_unless_given():
    assert OracleResult(12.0, "OPTIMAL").feasible is True
    assert OracleResult(12.0, "ROUTING_SUCCESS").feasible is True
    assert OracleResult(12.0, "INFEASIBLE").feasible is False
    assert OracleResult(None, "FEASIBLE").feasible is False  # no plan, nothing feasible
    assert OracleResult(None, "NO_SOLUTION").feasible is False
    assert OracleResult(30.0, "ADAPTIVE", feasible=True).feasible is True  # a checker's verdict wins
    assert OracleResult(30.0, "OPTIMAL", feasible=False).feasible is False


def test_solve_seconds_is_not_compared_and_the_result_is_frozen():
    a = OracleResult(5.0, "OPTIMAL", {"route": ["a", "b"]}, bound=5.0, solve_seconds=0.1, detail={"dropped": []})
    b = dataclasses.replace(a, solve_seconds=9.0)
    assert a == b
    assert a != dataclasses.replace(a, detail={"dropped": ["c"]})
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.cost = 4.0  # type: ignore[misc]


def test_the_record_holds_the_common_fields_and_no_wall_clock():
    res = OracleResult(7.0, "FEASIBLE", {"trips": []}, bound=6.0, time_limit_s=2.0, workers=1, solver="cp",
                       solve_seconds=3.5, detail={"deterministic_time": 1.0})
    assert oracle_record(res, "fp") == {
        "fingerprint": "fp", "value": 7.0, "status": "FEASIBLE", "time_limit_s": 2.0, "workers": 1,
        "solver": "cp", "ortools": ortools.__version__, "plan": {"trips": []},
    }


def _oracles() -> dict[str, Callable[[Any], OracleResult]]:
    """Every family's oracles (and adaptive oracles) by label, with short deterministic budgets
    where the oracle has one."""
    from crab_gym.envs.realm.campus_tour.oracle import solve_p1
    from crab_gym.envs.realm.disaster_relief.oracle import solve_p7
    from crab_gym.envs.realm.group_tours.oracle import solve_p2
    from crab_gym.envs.realm.jobshop.oracle import solve_jssp
    from crab_gym.envs.realm.ridesharing.oracle import solve_p3
    from crab_gym.envs.realm.ridesharing.oracle_disruptions import adaptive_oracle as adaptive_p4
    from crab_gym.envs.realm.ridesharing.references import p4_initial
    from crab_gym.envs.realm.supply_chain.oracle import adaptive, solve_p10
    from crab_gym.envs.realm.supply_chain.sim import SupplySim
    from crab_gym.envs.realm.thanksgiving.oracle import solve
    from crab_gym.envs.realm.thanksgiving.replan import replan_from
    from crab_gym.envs.realm.thanksgiving.sim import Kitchen
    from crab_gym.envs.realm.wedding.oracle import solve_p5
    from crab_gym.envs.realm.wedding.oracle_cpsat import solve_cpsat
    from crab_gym.envs.realm.wedding.oracle_disruptions import adaptive_oracle as adaptive_p8
    from crab_gym.envs.realm.wedding.references import p5_reference

    return {
        "P1 routing": lambda i: solve_p1(i, time_limit=0.5),
        "P2 CP-SAT": lambda i: solve_p2(i, time_limit=5.0),
        "P3 routing": lambda i: solve_p3(i, time_limit=30.0, solution_limit=50),
        "P4 adaptive": lambda i: adaptive_p4(i, p4_initial(i)["plan"]),
        "P5 routing": lambda i: solve_p5(i, solution_limit=50),
        "P5 CP-SAT": lambda i: solve_cpsat(i, 5.0),
        "P6 CP-SAT": lambda i: solve(i, 5.0),
        "P7 CP-SAT": lambda i: solve_p7(i, deterministic_limit=2.0),
        "P8 adaptive": lambda i: adaptive_p8(i, p5_reference(i).plan["routes"], i.disruptions),
        "P9 adaptive": lambda i: replan_from(Kitchen.start_of(i, i.delays), 5.0),
        "P10 foresight": lambda i: solve_p10(i),
        "P10 adaptive": lambda i: adaptive(SupplySim(i)).result(),
        "P11 CP-SAT": lambda i: solve_jssp(i, time_limit=10.0, num_workers=1, deterministic_limit=5.0),
    }


#: (oracle, shipped instance, the cost it finds, its status).
CASES = [
    ("P1 routing", "p1_small_01", 33, "FEASIBLE"),
    ("P2 CP-SAT", "p2_small_01", 175, "OPTIMAL"),
    ("P3 routing", "p3_small_01", 106, "ROUTING_SUCCESS"),
    ("P4 adaptive", "p4_small_01", 146, "ADAPTIVE"),
    ("P5 routing", "p5_small_01", 189, "ROUTING_SUCCESS"),
    ("P5 CP-SAT", "p5_small_01", 166, "OPTIMAL"),
    ("P6 CP-SAT", "p6_small_01", 253.2, "OPTIMAL"),
    ("P7 CP-SAT", "p7_small_01", 142919488, "OPTIMAL"),
    ("P8 adaptive", "p8_small_01", 197, "ADAPTIVE"),
    ("P9 adaptive", "p9_small_01", 359.6, "ADAPTIVE(OPTIMAL)"),
    ("P10 foresight", "p10_small_01", 6124, "OPTIMAL"),
    ("P10 adaptive", "p10_small_01", 6136, "ADAPTIVE_OPTIMAL"),
    ("P11 CP-SAT", "ft06", 55, "OPTIMAL"),
]


@pytest.mark.parametrize(("oracle", "name", "cost", "status"), CASES, ids=[c[0] for c in CASES])
def test_every_family_oracle_returns_one_result_priced_as_its_checker_prices_its_plan(oracle, name, cost, status):
    spec = problem_spec(oracle.split()[0])
    instance = spec.part("load")(name)
    res = _oracles()[oracle](instance)
    assert type(res) is OracleResult
    assert (res.cost, res.status, res.feasible) == (pytest.approx(cost), status, True)
    verdict = spec.part("check")(instance, copy.deepcopy(res.plan))
    assert verdict.feasible and verdict.cost == pytest.approx(res.cost)
    assert res.workers == 1 and res.solver and res.time_limit_s is not None


def test_p11_result_keeps_the_proven_bound_the_solver_schedule_and_the_instance_name():
    from crab_gym.envs.realm.jobshop.oracle import sequence_from_starts, solve_jssp

    instance = problem_spec("P11").part("load")("ft06")
    res = solve_jssp(instance, time_limit=10.0, num_workers=1, deterministic_limit=5.0)
    assert res.bound <= res.cost == res.detail["solver_makespan"] == 55
    assert (res.time_limit_s, res.workers, res.detail["instance"]) == (10.0, 1, "ft06")
    assert res.plan == {"sequence": sequence_from_starts(instance, res.detail["starts"])}
