"""P3/P4 coordination on hand-made towns: the share of the gain from working together (from
the best one-vehicle plan to the best plan known) that a plan realises, every value worked
out by hand below. One vehicle doing all the work scores 0 (issue 22: a vehicle alone
scored 0.621 on p3_small_04 and 0.709 on p4_small_02)."""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.ridesharing.best_known import solo_plan
from crab_gym.envs.realm.ridesharing.checker import check_plan
from crab_gym.envs.realm.ridesharing.coordination import ride_coordination
from crab_gym.envs.realm.ridesharing.env import RideSharingEnv
from crab_gym.envs.realm.ridesharing.env_disruptions import RideSharingDisruptionEnv
from crab_gym.envs.realm.ridesharing.formats import load_p3, load_p4, shipped_p3_names, shipped_p4_names
from crab_gym.envs.realm.ridesharing.model import P3Instance, P4Instance
from crab_gym.envs.realm.ridesharing.references import p3_reference, p4_reference, solo_reference
from crab_gym.evaluation.episode_runner import finished_metrics

# A line a -10- b -10- c (a to c: 20 minutes, through b). v1 waits at a with one seat, v2 at
# c with two. p1 rides a -> b and p2 rides c -> b, both boarding by 8:10; p3 rides c -> a any
# time before 11:40.
TOWN = {
    "name": "hand_team",
    "locations": ["a", "b", "c"],
    "roads": [[0, 10, None], [10, 0, 10], [None, 10, 0]],
    "requests": [
        {"passenger_id": "p1", "pickup": "a", "dropoff": "b", "pickup_window": [480, 490], "latest_dropoff": 520},
        {"passenger_id": "p2", "pickup": "c", "dropoff": "b", "pickup_window": [480, 490], "latest_dropoff": 520},
        {"passenger_id": "p3", "pickup": "c", "dropoff": "a", "pickup_window": [480, 700], "latest_dropoff": 800},
    ],
    "vehicles": [{"vehicle_id": "v1", "location": "a", "capacity": 1}, {"vehicle_id": "v2", "location": "c", "capacity": 2}],
    "start_time": 480,
}
INSTANCE = P3Instance.model_validate(TOWN)
PENALTY = INSTANCE.unserved_penalty  # 5000

# Only v1 reaches a by 8:10 and only v2 reaches c by 8:10, so no vehicle alone serves p1 and p2.
# v2 alone: p2 and p3 pooled from c (10 to b, 10 on to a) = 20, p1 unserved: 5020.
# v1 alone: p1 (10), then b -> c (10) for p3 and c -> a (20) = 40, p2 unserved: 5040.
SOLO = 20 + PENALTY
V2_ALONE = {"v1": [], "v2": ["pickup:p2", "pickup:p3", "dropoff:p2", "dropoff:p3"]}  # 5020
V1_ALONE = {"v1": ["pickup:p1", "dropoff:p1", "pickup:p3", "dropoff:p3"], "v2": []}  # 5040
# The team: v1 takes p1 (10), v2 pools p2 and p3 (20): 30, the optimum.
POOL = {"v1": ["pickup:p1", "dropoff:p1"], "v2": ["pickup:p2", "pickup:p3", "dropoff:p2", "dropoff:p3"]}
BEST = 30
# v1 takes p1 then p3 (40), v2 takes p2 (10): 50.
SEQUENTIAL = {"v1": ["pickup:p1", "dropoff:p1", "pickup:p3", "dropoff:p3"], "v2": ["pickup:p2", "dropoff:p2"]}
# v1 boards p1 and p3 together (two aboard, one seat): 0 + 20 + 10 + 10, plus v2's 10 = 50.
OVERLOAD = {"v1": ["pickup:p1", "pickup:p3", "dropoff:p1", "dropoff:p3"], "v2": ["pickup:p2", "dropoff:p2"]}
NOBODY = {"v1": [], "v2": []}


def checked(plan: dict, instance: P3Instance = INSTANCE, solo: float = SOLO, best: float = BEST) -> dict:
    return check_plan(instance, {"assignments": plan}, reference_cost=best, solo_cost=solo)


def test_the_best_one_vehicle_plan_is_v2_pooling():
    solo = solo_plan(INSTANCE)
    assert (solo["value"], solo["vehicle"], solo["feasible"]) == (SOLO, "v2", True)
    assert checked(V2_ALONE)["cost"] == SOLO and checked(V1_ALONE)["cost"] == 40 + PENALTY


@pytest.mark.parametrize("plan", [V2_ALONE, V1_ALONE, NOBODY])
def test_one_vehicle_alone_or_nobody_scores_zero(plan):
    check = checked(plan)
    assert check["feasible"] and check["metrics"]["coordination"] == 0.0


def test_the_best_team_plan_scores_one():
    check = checked(POOL)
    assert check["feasible"] and check["cost"] == BEST and check["metrics"]["coordination"] == 1.0


def test_a_dearer_team_plan_scores_its_share_of_the_gain():
    # (5020 - 50) / (5020 - 30): serving everyone is most of the gain, the detour costs a little
    check = checked(SEQUENTIAL)
    assert check["cost"] == 50
    assert check["metrics"]["coordination"] == pytest.approx((SOLO - 50) / (SOLO - BEST)) == pytest.approx(4970 / 4990)


def test_an_infeasible_plan_scores_zero_even_when_it_serves_everyone():
    check = checked(OVERLOAD)
    assert not check["feasible"] and check["cost"] == 50 and check["metrics"]["coordination"] == 0.0


def test_nothing_to_coordinate_is_not_applicable():
    # v1 chains both rides of a wide-window town for 20 minutes; that is also the best plan,
    # so one vehicle alone is as good as the team: coordination is None for every plan
    town = {**TOWN, "name": "hand_chain", "requests": [
        {"passenger_id": "p1", "pickup": "a", "dropoff": "b", "pickup_window": [480, 540], "latest_dropoff": 600},
        {"passenger_id": "p2", "pickup": "b", "dropoff": "c", "pickup_window": [480, 600], "latest_dropoff": 660},
    ]}
    inst = P3Instance.model_validate(town)
    assert solo_plan(inst)["value"] == 20
    chain = {"v1": ["pickup:p1", "dropoff:p1", "pickup:p2", "dropoff:p2"], "v2": []}
    split = {"v1": ["pickup:p1", "dropoff:p1"], "v2": ["pickup:p2", "dropoff:p2"]}
    assert checked(chain, inst, solo=20, best=20)["metrics"]["coordination"] is None
    assert checked(split, inst, solo=20, best=20)["metrics"]["coordination"] is None
    assert ride_coordination(30, True, 20, 20) is None and ride_coordination(30, True, None, 20) is None


@pytest.mark.parametrize(("plan", "expected"), [(POOL, 1.0), (SEQUENTIAL, 4970 / 4990), (V2_ALONE, 0.0)])
def test_the_p3_env_reports_the_same_coordination(plan, expected):
    env = RideSharingEnv(INSTANCE, reference=BEST)
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": {"assignments": plan}})
    assert info["valid"] and finished_metrics(env, info)["coordination"] == pytest.approx(expected)  # the runner's


def test_p4_prices_every_cost_facing_the_disruptions():
    # 5 more minutes on a-b from 8:00 to 9:00. POOL: v1 a -> b 15, v2 c -> b 10 and b -> a 15
    # (leaving b at 8:10): 40. SEQUENTIAL: v1 15 + 10 + (10 + 15) = 50, v2 10: 60. v2 alone
    # pooling: 25 + 5000.
    delay = {"type": "traffic_delay", "route": "a-b", "start": 480, "duration": 60, "delay": 5}
    inst = P4Instance.model_validate({**TOWN, "disruptions": [delay]})
    assert solo_reference(inst, inst.disruptions)["value"] == 25 + PENALTY
    for plan, cost, expected in ((POOL, 40, 1.0), (SEQUENTIAL, 60, 4965 / 4985)):
        env = RideSharingDisruptionEnv(inst, reference=40, adaptation_reference="oracle")
        env.reset(seed=0)
        *_, info = env.step({"name": "submit_plan", "arguments": {"assignments": plan}})
        while not info["metrics"]:
            *_, info = env.step({"name": "submit_plan", "arguments": {"assignments": info["pending_plan"]}})
        metrics = finished_metrics(env, info)  # the solo baseline waits for the runner
        assert metrics["cost"] == cost and metrics["coordination"] == pytest.approx(expected)
        check = check_plan(inst, info["solution"], reference_cost=40, solo_cost=25 + PENALTY)
        assert check["cost"] == cost and check["metrics"]["coordination"] == pytest.approx(expected)


def test_shipped_solo_plans_score_zero_and_references_one():
    for problem, names, load, reference in (("p3", shipped_p3_names(), load_p3, p3_reference),
                                            ("p4", shipped_p4_names(), load_p4, p4_reference)):
        for name in names:
            inst = load(name)
            solo = solo_reference(inst, getattr(inst, "disruptions", None))
            ref = reference(inst)
            assert solo["plan"] and sum(1 for stops in solo["plan"].values() if stops) <= 1, name
            expected = None if solo["value"] <= ref.value else 1.0
            check = check_plan(inst, ref.plan, reference_cost=ref.value, solo_cost=solo["value"])
            assert check["metrics"]["coordination"] == expected, (problem, name)
            check = check_plan(inst, {"assignments": solo["plan"]}, reference_cost=ref.value, solo_cost=solo["value"])
            assert check["cost"] == solo["value"] and check["metrics"]["coordination"] in (None, 0.0), name
