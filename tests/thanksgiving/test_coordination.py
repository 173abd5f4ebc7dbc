"""P6/P9 coordination, worked out by hand on TINY (conftest): the solo afternoon, a good, a
middling and a bad joint plan, and the env reporting the same numbers.

TINY: start 10:00 (600), 30 minutes to the airport; mom home (turkey 90 oven, pie 40 oven);
dad lands 660 (gravy 20, after turkey); kid lands 690 (pie). car1 at home, car2 at the airport.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.envs.realm.common.coordination import savings_share
from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.coordination import solo_cost, solo_plan
from tests.thanksgiving.conftest import TINY

#: By hand: the oven holds turkey then pie (600-690-730), dad fetched by car2 at once (home 690)
#: cooks gravy 690-710, car1 fetches kid (60 minutes). Dinner 730: 130 + 0.01 x 90.
OPTIMUM = 130.9
GOOD = {
    "pickups": [{"car": "car2", "member": "dad", "depart": 600}, {"car": "car1", "member": "kid", "depart": 660}],
    "cooking_schedule": [
        {"task": "turkey", "cook": "mom", "start": 600},
        {"task": "pie", "cook": "mom", "start": 690},
        {"task": "gravy", "cook": "dad", "start": 690},
    ],
}
#: One car fetches both travellers one at a time, one task at a time in the kitchen.
ONE_AT_A_TIME = {
    "pickups": [{"car": "car1", "member": "dad", "depart": 630}, {"car": "car1", "member": "kid", "depart": 690}],
    "cooking_schedule": [
        {"task": "turkey", "cook": "mom", "start": 600},
        {"task": "gravy", "cook": "dad", "start": 690},
        {"task": "pie", "cook": "mom", "start": 710},
    ],
}


def test_the_solo_afternoon_is_one_car_and_one_task_at_a_time(tiny):
    landings = landings_of(tiny)
    # car2 (at the airport) meets dad at 660 (home 690), goes back for kid at 690 (airport
    # 720, home 750): 30 + 60 minutes of driving. Kitchen: turkey 600-690, gravy (dad home
    # 690) 690-710, pie 710-750.
    assert solo_plan(tiny, "car2", landings) == {
        "pickups": [{"car": "car2", "member": "dad", "depart": 660}, {"car": "car2", "member": "kid", "depart": 690}],
        "cooking_schedule": [
            {"task": "turkey", "cook": "mom", "start": 600},
            {"task": "gravy", "cook": "dad", "start": 690},
            {"task": "pie", "cook": "mom", "start": 710},
        ],
    }
    # car1 drives 120 minutes for the same afternoon (151.2); car2's is cheaper: 150 + 0.9.
    assert check_plan(tiny, solo_plan(tiny, "car1", landings), landings).cost == pytest.approx(151.2)
    assert solo_cost(tiny, landings) == pytest.approx(150.9)


def test_a_good_plan_realises_the_whole_gain(tiny):
    landings = landings_of(tiny)
    verdict = check_plan(tiny, GOOD, landings)
    assert verdict.feasible and verdict.cost == pytest.approx(OPTIMUM)
    assert savings_share(verdict.cost, True, solo_cost(tiny, landings), OPTIMUM) == pytest.approx(1.0)


def test_a_shared_trip_that_keeps_dad_waiting_realises_half(tiny):
    # car1 takes dad and kid together (leaves 630, waits for kid, home 720; 60 minutes):
    # gravy 720-740, dinner 740, cost 140.6; (150.9 - 140.6) / (150.9 - 130.9) = 0.515.
    plan = {
        "pickups": [{"car": "car1", "member": "dad", "depart": 630}, {"car": "car1", "member": "kid", "depart": 630}],
        "cooking_schedule": [
            {"task": "turkey", "cook": "mom", "start": 600},
            {"task": "pie", "cook": "mom", "start": 690},
            {"task": "gravy", "cook": "dad", "start": 720},
        ],
    }
    landings = landings_of(tiny)
    verdict = check_plan(tiny, plan, landings)
    assert verdict.feasible and verdict.cost == pytest.approx(140.6)
    assert savings_share(verdict.cost, True, solo_cost(tiny, landings), OPTIMUM) == pytest.approx(0.515)


def test_one_thing_at_a_time_and_a_clash_score_zero(tiny):
    landings = landings_of(tiny)
    solo = solo_cost(tiny, landings)
    # One car doing every pickup and the cooks taking turns: 151.2, dearer than the solo
    # baseline (150.9): no gain at all.
    verdict = check_plan(tiny, ONE_AT_A_TIME, landings)
    assert verdict.feasible and verdict.cost == pytest.approx(151.2)
    assert savings_share(verdict.cost, True, solo, OPTIMUM) == 0.0
    # The cooks in each other's way: kid's pie in the oven while mom's turkey is in it.
    clash = {**GOOD, "cooking_schedule": [*GOOD["cooking_schedule"][:1], {"task": "pie", "cook": "kid", "start": 660},
                                          GOOD["cooking_schedule"][2]]}
    verdict = check_plan(tiny, clash, landings)
    assert not verdict.feasible
    assert savings_share(verdict.cost, verdict.feasible, solo, OPTIMUM) == 0.0


def test_nothing_to_gain_and_no_reference():
    # solo == reference: a plan at that cost scores 1, a dearer one 0.
    assert savings_share(200.0, True, 200.0, 200.0) == 1.0
    assert savings_share(200.5, True, 200.0, 200.0) == 0.0
    # no reference value: a feasible plan cheaper than the solo afternoon scores 1.
    assert savings_share(180.0, True, 200.0, None) == 1.0
    assert savings_share(float("inf"), False, 200.0, 150.0) == 0.0


@pytest.mark.parametrize(("plan", "expected"), [(GOOD, 1.0), (ONE_AT_A_TIME, 0.0)])
def test_the_env_reports_the_same(plan, expected):
    env = gym.make("Realm-P6-v0", instance=TINY, reference=OPTIMUM).unwrapped
    env.reset(seed=0)
    *_, info = env.submit_plan(plan)
    m = info["metrics"]
    assert m["coordination"] == pytest.approx(expected)
    assert m["solo_cost"] == pytest.approx(150.9)


def test_p9_measures_against_the_real_landings(tiny_delayed):
    # dad lands 30 minutes late (690): car2 meets him at 690 (home 720), then goes for kid
    # (airport 750, home 780). Kitchen: turkey 600-690; at 690 dad is not home, so pie
    # 690-730, then gravy 730-750. Dinner 750: 150 + 0.01 x 90.
    landings = landings_of(tiny_delayed, tiny_delayed.delays)
    assert landings == {"dad": 690, "kid": 690}
    assert solo_plan(tiny_delayed, "car2", landings)["cooking_schedule"] == [
        {"task": "turkey", "cook": "mom", "start": 600},
        {"task": "pie", "cook": "mom", "start": 690},
        {"task": "gravy", "cook": "dad", "start": 730},
    ]
    assert solo_cost(tiny_delayed, landings) == pytest.approx(150.9)
