"""The scoring probes play the adversary (issue 36): a hold-back agent, re-planners from the
first strike against the adaptation yardstick, and a hinted solver against the references.
Each probe flags an env built to break its promise (a probe that cannot fail proves nothing),
and the shipped J2/J4 pass them."""

from __future__ import annotations

import pytest

import crab_gym  # noqa: F401
from crab_gym.checks.scoring_probes import check_adversarial, replanners
from tests.scoring.broken_shop_envs import AgentStateYardstickEnv, GreedyReferenceEnv, RuleOnlyYardstickEnv

SMALL = ["j2_small_01", "j2_small_03", "j2_small_06"]


def test_the_hold_back_probe_flags_the_yardstick_of_the_agents_own_state():
    report = check_adversarial("Realm-J2-v0", instances=["j2_small_03", "j2_small_08", "j2_small_10"],
                               random_continuations=0,
                               make_env=lambda i: AgentStateYardstickEnv(instance=i, adaptation_reference="resolve"))
    assert report.kinds().get("holding an actor back raises adaptation", 0) >= 1, report.failures
    rows = report.probe_rows["hold_back"]
    assert max(r["hold_back_adaptation"] for r in rows) == pytest.approx(1.0)  # the trick: 1.000


def test_the_replanner_probe_flags_a_weak_yardstick():
    report = check_adversarial("Realm-J2-v0", instances=SMALL[:2], seeds=1, random_continuations=2,
                               make_env=lambda i: RuleOnlyYardstickEnv(instance=i, adaptation_reference="resolve"))
    assert report.kinds().get("a re-planner beats the yardstick", 0) >= 1, report.failures


def test_the_reference_attack_flags_a_beatable_reference():
    report = check_adversarial("Realm-J2-v0", instances=["j2_small_00"], seeds=1, random_continuations=0,
                               make_env=lambda i: GreedyReferenceEnv(instance=i, adaptation_reference="resolve"))
    assert report.kinds().get("the reference attack beats a reference") == 1, report.failures
    row = report.probe_rows["references"][0]
    assert row["attack"] < row["reference"]


def test_the_replanner_set_is_driven_by_the_registry():
    names = set(replanners("Realm-J4-v0", 3))
    assert {"random-0", "random-2", "j_greedy", "j_spt", "j_mwkr", "j_est", "j_gap_fill"} <= names
    assert "oracle" not in names


@pytest.mark.parametrize("env_id, names", [  # the whole set: benchmarks/scoring_probes.py (minutes)
    ("Realm-J2-v0", ["j2_small_05", "j2_medium_02"]),
    ("Realm-J4-v0", ["j4_small_03", "j4_medium_04"]),
])
def test_the_shipped_j2_j4_pass_the_probes(env_id, names):
    report = check_adversarial(env_id, instances=names, seeds=2, random_continuations=2,
                               make_kwargs={"adaptation_reference": "resolve"})
    report.raise_if_failed()
    assert all(r["yardstick"] is not None for r in report.probe_rows["replanners"])


def test_check_scoring_plays_the_probes_when_asked():
    from crab_gym.checks import check_scoring

    report = check_scoring("Realm-J2-v0", instances=["j2_small_03"], discriminate=False, random_episodes=1,
                           search_tries=2, adversarial=True, probe_options={"seeds": 1, "random_continuations": 1})
    report.raise_if_failed()
    assert [r["instance"] for r in report.probe_rows["hold_back"]] == ["j2_small_03"]
    assert report.probe_rows["replanners"][0]["yardstick"] == 697.0  # the CP-SAT optimum from the strike


def test_hold_back_waits_where_only_the_held_actor_may_move():
    """P8 gives the turn to one vehicle at a time: holding the van back means making it wait
    (before, it drove whenever it had the turn, and its episodes equalled honest play's)."""
    import gymnasium as gym
    import numpy as np

    from crab_gym.baselines.hold_back import HoldBackPolicy

    env = gym.make("Realm-P8-v0", instance="p8_small_00")
    obs, info = env.reset(seed=0)
    policy, base = HoldBackPolicy(env, seed=0), env.unwrapped
    held = policy._held_actions()
    seen = 0
    for _ in range(30):
        mask = np.asarray(base.action_masks(), dtype=bool)
        action = policy(obs, info)
        if not (mask & ~held).any():
            assert action == {"name": "wait", "arguments": {"vehicle": "van"}}
            seen += 1
        else:
            assert action["arguments"]["vehicle"] != "van"
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert seen >= 1
