"""Realm-P2-v0: the oracle against exhaustive search, and the reference store."""

import pytest

from crab_gym.envs.realm.group_tours import oracle as p2_oracle
from crab_gym.envs.realm.group_tours.checker import check_p2
from crab_gym.envs.realm.group_tours.formats import load_p2
from crab_gym.envs.realm.group_tours.generator import generate_p2
from crab_gym.envs.realm.group_tours.heuristics import earliest_start_plan
from crab_gym.envs.realm.group_tours.model import P2Group
from crab_gym.envs.realm.group_tours.oracle import brute_force_p2, grid_step, solve_p2
from crab_gym.envs.realm.group_tours.references import reference_p2


@pytest.mark.parametrize("which", [f"p2_small_0{k}" for k in range(7)] + [("small", s) for s in (301, 302, 303)])
def test_p2_cpsat_matches_brute_force(which):
    inst = load_p2(which) if isinstance(which, str) else generate_p2(*which)
    best, plan = brute_force_p2(inst)
    res = solve_p2(inst, time_limit=2.0)
    assert res.status == "OPTIMAL" and res.cost == best and res.bound == pytest.approx(best)
    check = check_p2(inst, res.plan, best)
    assert check.feasible and check.cost == best
    assert check_p2(inst, {"assignments": plan}, best).cost == best


def test_p2_interval_fallback_agrees_with_the_time_indexed_model(monkeypatch):
    inst = load_p2("p2_small_02")
    monkeypatch.setattr(p2_oracle, "MAX_GRID_VARS", 0)
    res = p2_oracle.solve_p2(inst, time_limit=2.0)
    assert "interval" in res.solver and res.cost == brute_force_p2(inst)[0]


def test_p2_grid_step_is_the_gcd_of_the_start_data():
    inst = load_p2("p2_medium_00")
    assert grid_step(inst) == 5
    odd = inst.model_copy(update={"groups": [*inst.groups[:-1], inst.groups[-1].model_copy(update={"arrival": 601})]})
    assert grid_step(odd) == 1


def test_p2_drops_a_group_nobody_can_take():
    inst = load_p2("p2_small_00")
    giant = P2Group(group_id="giant", size=99, arrival=600, preferred=600)
    bad = inst.model_copy(update={"groups": [*inst.groups, giant]})
    res = solve_p2(bad, time_limit=2.0)
    assert res.status == "INFEASIBLE" and res.detail["dropped"] == ["giant"]
    assert sum(len(t) for t in res.plan["assignments"].values()) == len(inst.groups)


def test_shipped_references_never_call_a_solver(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("solver called")

    monkeypatch.setattr("crab_gym.envs.realm.group_tours.oracle.solve_p2", boom)
    assert reference_p2(load_p2("p2_large_03")).source == "shipped"


def test_other_instances_are_solved_once_then_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    # a shipped name with other data is not taken for the shipped instance
    edited = load_p2("p2_small_01")
    edited = edited.model_copy(update={"balance_weight": 0})
    rec = reference_p2(edited)
    assert rec.source == "solved" and rec.value == brute_force_p2(edited)[0]


@pytest.mark.parametrize("name", ["p2_small_00", "p2_medium_03", "p2_large_02"])
def test_p2_greedy_hint_is_a_feasible_plan_no_better_than_the_optimum(name):
    inst = load_p2(name)
    plan = earliest_start_plan(inst)
    check = check_p2(inst, plan, None)
    assert check.feasible and sum(map(len, plan["assignments"].values())) == len(inst.groups)
    assert check.cost >= reference_p2(inst).value  # the shipped optimum (CP-SAT proved it)
