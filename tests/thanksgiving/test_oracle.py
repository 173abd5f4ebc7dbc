"""The CP-SAT oracle against exhaustive search, the checker, re-solves from a state, and the
shipped references."""

from __future__ import annotations

import json

import pytest

from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.exhaustive import brute_force
from crab_gym.envs.realm.thanksgiving.formats import load_p6, load_p9, shipped_p6_names, shipped_p9_names
from crab_gym.envs.realm.thanksgiving.generator import generate_p6, generate_p9
from crab_gym.envs.realm.thanksgiving.heuristics import greedy_play
from crab_gym.envs.realm.thanksgiving.model import INSTANCE_DIRS
from crab_gym.envs.realm.thanksgiving.oracle import solve, solve_from
from crab_gym.envs.realm.thanksgiving.replan import replan_from
from crab_gym.envs.realm.thanksgiving.sim import Kitchen

TINY_CASES = [(seed, m, t, c) for seed in range(4) for m, t, c in ((3, 3, 1), (3, 4, 2), (4, 4, 1))]


@pytest.mark.parametrize(("seed", "members", "tasks", "cars"), TINY_CASES)
def test_cp_sat_matches_exhaustive_search(seed, members, tasks, cars):
    inst = generate_p6("small", seed, n_members=members, n_tasks=tasks, n_cars=cars)
    best, plan = brute_force(inst)
    res = solve(inst)
    assert res.status == "OPTIMAL" and best is not None
    assert res.cost == pytest.approx(best)
    verdict = check_plan(inst, res.plan, landings_of(inst))
    assert verdict.feasible and verdict.cost == pytest.approx(res.cost)  # the plan costs what CP-SAT says


@pytest.mark.parametrize(("seed", "members", "tasks", "cars"), TINY_CASES[::2])
def test_cp_sat_matches_exhaustive_search_when_the_deadline_cannot_be_kept(seed, members, tasks, cars):
    """Lateness is a cost, modelled exactly: with the deadline an hour after the start (no
    play keeps it) CP-SAT and the exhaustive search still agree on the cheapest late plan."""
    drawn = generate_p6("small", seed, n_members=members, n_tasks=tasks, n_cars=cars)
    inst = drawn.model_copy(update={"deadline": drawn.start_time + 60})
    best, _ = brute_force(inst)
    res = solve(inst)
    verdict = check_plan(inst, res.plan, landings_of(inst))
    assert res.status == "OPTIMAL" and verdict.feasible and verdict.late > 0
    assert res.cost == pytest.approx(best) and verdict.cost == pytest.approx(res.cost)


@pytest.mark.parametrize("seed", range(3))
def test_cp_sat_matches_exhaustive_search_with_delays_known(seed):
    inst = generate_p9("small", seed, n_members=3, n_tasks=4, n_cars=1)
    best, _ = brute_force(inst, inst.delays)
    assert solve(inst.static(), delays=inst.delays).cost == pytest.approx(best)


def test_the_oracle_on_the_tiny_instance(tiny):
    res = solve(tiny)
    # turkey 10:00-11:30, gravy from dad's arrival 11:30 to 11:50; pie by kid 12:00-12:40
    # (or mom after the turkey, 11:30-12:10): ready 12:10 with car1 for dad (60 min) and
    # car2 for kid (30 min): cost 130 + 0.9
    assert res.status == "OPTIMAL" and res.cost == pytest.approx(130.9)
    assert brute_force(tiny)[0] == pytest.approx(130.9)


def test_solve_from_keeps_what_is_under_way(tiny):
    k = Kitchen.start_of(tiny)
    k.start("pie", "mom")  # a poor first move: the turkey now waits for the oven
    k.send("car1", "dad")
    res = solve_from(k)
    assert {"task": "pie", "cook": "mom", "start": 600} in res.plan["cooking_schedule"]
    assert {"car": "car1", "member": "dad", "depart": 600} in res.plan["pickups"]
    verdict = check_plan(tiny, res.plan, landings_of(tiny))
    assert verdict.feasible and verdict.cost == pytest.approx(res.cost) and res.cost > solve(tiny).cost


def test_replanning_at_an_announcement(tiny_delayed):
    chain = replan_from(Kitchen.start_of(tiny_delayed, tiny_delayed.delays))
    assert chain.feasible and chain.detail["resolves"] == 1 and chain.detail["statuses"] == ["OPTIMAL", "OPTIMAL"]
    hindsight = solve(tiny_delayed.static(), delays=tiny_delayed.delays)
    assert hindsight.cost <= chain.cost + 1e-9
    verdict = check_plan(tiny_delayed, chain.plan, landings_of(tiny_delayed, tiny_delayed.delays))
    assert verdict.cost == pytest.approx(chain.cost)


def _records(prefix: str) -> dict:
    return json.loads((INSTANCE_DIRS[prefix] / "references.json").read_text())["instances"]


def test_shipped_p6_references_are_proven_and_cross_checked():
    records = _records("p6")
    names = shipped_p6_names()
    assert len(names) == 20 and set(records) == set(names)
    assert {n.split("_")[1] for n in names} == {"small", "medium", "large"}
    for name in names:
        rec, inst = records[name], load_p6(name)
        assert rec["fingerprint"] == inst.fingerprint() and rec["status"] == "OPTIMAL" and rec["workers"] == 1
        assert rec["value"] == pytest.approx(rec["bound"])
        assert check_plan(inst, rec["plan"], landings_of(inst)).cost == pytest.approx(rec["value"])
        if "small" in name:
            assert rec["brute_force_value"] == pytest.approx(rec["value"])
        assert rec["solo_status"] == "OPTIMAL" and rec["solo_bound"] == pytest.approx(rec["solo_value"])
        assert rec["solo_value"] >= rec["value"]


def test_shipped_p9_references_are_the_hindsight_optimum():
    """The P9 reference is the best plan known: CP-SAT with every delay known, proven optimal,
    no dearer than the best afternoon without foresight (kept as ``adaptive_value``)."""
    records = _records("p9")
    assert set(records) == set(shipped_p9_names()) and len(records) == 20
    for name, rec in records.items():
        inst = load_p9(name)
        assert inst.delays and rec["fingerprint"] == inst.fingerprint()
        assert rec["status"] == rec["hindsight_status"] == "OPTIMAL" and rec["workers"] == 1
        assert rec["policy"] == "hindsight_oracle" and rec["value"] == pytest.approx(rec["bound"])
        verdict = check_plan(inst, rec["plan"], landings_of(inst, inst.delays))
        assert verdict.feasible and verdict.cost == pytest.approx(rec["value"])
        adaptive = min(v for v in (rec["adaptive_oracle_value"], rec["greedy_value"]) if v is not None)
        assert rec["adaptive_value"] == pytest.approx(adaptive) and rec["value"] <= adaptive + 1e-9
        assert rec["solo_status"] == "OPTIMAL" and rec["solo_bound"] == pytest.approx(rec["solo_value"])
        assert rec["solo_value"] >= rec["value"]


def test_generated_instances_are_feasible_and_reproducible():
    for size in ("small", "medium", "large"):
        for seed in range(3):
            a, b = generate_p9(size, seed), generate_p9(size, seed)
            assert a == b and a.deadline == 18 * 60
            played = greedy_play(Kitchen.start_of(a, a.delays))
            assert check_plan(a, played.plan(), landings_of(a, a.delays)).feasible
    assert generate_p6("small", 1) != generate_p6("small", 2)
    ids = {(tuple(g.car_ids), tuple(g.member_ids), tuple(g.task_ids)) for g in (generate_p6("medium", s, n_members=5, n_tasks=7, n_cars=2)
                                                            for s in range(4))}
    assert len(ids) == 1  # the same counts give the same ids (spaces survive a fresh draw)
