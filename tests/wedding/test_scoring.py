"""The scoring promises on P5/P8, from the audit of issue 22: references no plan beats,
doing nothing scores 0, adaptation against a reference that never loses to ignoring, and
disruptions that matter."""

from __future__ import annotations

import gymnasium as gym
import pytest

from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.formats import load_p5, load_p8, shipped_p8_names
from crab_gym.envs.realm.wedding.local_search import improve
from crab_gym.envs.realm.wedding.oracle import routes_by_id
from crab_gym.envs.realm.wedding.oracle_cpsat import solve_cpsat
from crab_gym.envs.realm.wedding.references import p5_reference, p8_reference
from crab_gym.envs.realm.wedding.sim import plan_codes

#: The audit's plan of 314 minutes on p5_large_02 (the shipped reference was 329).
AUDIT_314 = {"van": ["errand:music", "errand:wine", "errand:favors"],
             "car1": ["errand:photographer", "errand:decorations", "pickup:avery", "errand:cake", "errand:gift"],
             "car2": ["pickup:riley", "pickup:taylor", "pickup:lee", "pickup:jamie"],
             "eli": ["pickup:alex", "pickup:morgan", "pickup:jordan"]}


def test_the_audit_plans_do_not_beat_the_references():
    inst = load_p5("p5_large_02")
    assert check_plan(inst, AUDIT_314).feasible and check_plan(inst, AUDIT_314).cost == 314
    assert p5_reference(inst).value <= 314
    assert p5_reference(load_p5("p5_large_03")).value <= 263


def test_the_cpsat_model_accepts_the_audit_plan():
    inst = load_p5("p5_large_02")
    res = solve_cpsat(inst, 5, hint=plan_codes(inst, AUDIT_314), fix_hint=True)
    assert res.cost == 314


@pytest.mark.parametrize("name", ["p5_medium_06", "p5_large_02", "p5_large_03"])
def test_a_short_local_search_does_not_beat_the_reference(name):
    inst = load_p5(name)
    ref = p5_reference(inst)

    def judge(plan):
        verdict = check_plan(inst, routes_by_id(inst, plan))
        return not verdict.feasible, int(verdict.cost)

    _, (infeasible, cost) = improve(plan_codes(inst, ref.plan["routes"]), judge, list(range(len(inst.vehicles))),
                                    inst.venue_code, tries=1500, seed=7)
    assert not infeasible and cost >= ref.value


def test_keeping_the_p5_plan_never_beats_the_p8_reference():
    """The audit: resubmitting the undisrupted plan gave 267 against 306 on p8_large_01."""
    for name in shipped_p8_names():
        inst = load_p8(name)
        ref = p8_reference(inst)
        kept = check_plan(inst, p5_reference(inst).plan["routes"], disruptions=inst.disruptions)
        assert ref.extra["feasible"]
        assert not kept.feasible or kept.cost >= ref.value, name
        assert ref.extra["initial_value"] == p5_reference(load_p5(name.replace("p8_", "p5_"))).value


def test_the_shipped_disruptions_matter_on_most_instances():
    matter = 0
    for name in shipped_p8_names():
        inst = load_p8(name)
        ref = p8_reference(inst)
        undisrupted = ref.extra["initial_value"]
        kept = check_plan(inst, p5_reference(inst).plan["routes"], disruptions=inst.disruptions)
        costlier = not kept.feasible or kept.cost > undisrupted
        replan_wins = ref.extra["adaptive_value"] < (kept.cost if kept.feasible else float("inf"))
        matter += costlier and replan_wins
    assert matter >= 15


@pytest.mark.parametrize("env_id, name", [("Realm-P5-v0", "p5_medium_00"), ("Realm-P8-v0", "p8_large_01")])
def test_doing_nothing_scores_nothing(env_id, name):
    env = gym.make(env_id, instance=name)
    env.reset(seed=0)
    routes = {vid: [] for vid in env.unwrapped.vehicle_ids}
    _, reward, done, _, info = env.step({"name": "submit_plan", "arguments": {"routes": routes}})
    m = info["metrics"]
    assert done and info["completeness"] == 0 and reward == 0
    assert m["optimality"] <= 0.05 and m["planning_quality"] == 0 and m["coordination"] == 0
    if env_id == "Realm-P8-v0":
        assert m["adaptation"] in (None, 0.0)  # None if the day ended before any disruption struck


def test_adaptation_is_not_applicable_when_no_disruption_struck():
    """Was 1.0 for a feasible plan (and 0.0 for doing nothing) before any disruption."""
    from crab_gym.envs.realm.wedding.disruptions import TrafficDelay
    from crab_gym.envs.realm.wedding.env_disruptions import WeddingDisruptionEnv
    from tests.wedding.test_env_p8 import line_town

    late = TrafficDelay(route="airport-venue", start=1000, duration=30, delay=10)
    for routes in ({"van": ["pickup:ana"]}, {"van": []}):
        env = WeddingDisruptionEnv(line_town([late]), reference=40.0)
        env.reset(seed=0)
        *_, done, _, info = env.step({"name": "submit_plan", "arguments": {"routes": routes}})
        assert done and info["metrics"]["adaptation"] is None and info["metrics"]["disruptions_applied"] == 0


def test_ignoring_a_disruption_scores_lower_adaptation_than_replanning():
    name = next(n for n in shipped_p8_names() if n.startswith("p8_small") and p8_reference(load_p8(n)).extra["disruption_matters"])
    scores = {}
    for label in ("ignore", "oracle"):
        env = gym.make("Realm-P8-v0", instance=name)
        env.reset(seed=0)
        base = env.unwrapped
        plan = (p5_reference(base.instance) if label == "ignore" else base.reference).plan["routes"]
        done = False
        while not done:
            *_, done, _, info = env.step({"name": "submit_plan", "arguments": {"routes": plan}})
        scores[label] = env.unwrapped.finish_metrics()["adaptation"]
    assert scores["ignore"] < scores["oracle"] == 1.0
