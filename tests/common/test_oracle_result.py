"""The one oracle result type (common.oracle_result) and its record (common.oracle_record)."""

from __future__ import annotations

import dataclasses

import ortools
import pytest

from crab_gym.envs.realm.common.oracle_record import oracle_record
from crab_gym.envs.realm.common.oracle_result import OracleResult


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
