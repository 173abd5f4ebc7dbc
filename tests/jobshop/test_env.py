"""Realm-P11-v0: Gymnasium contract, actions, rewards, info and rendering."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.datasets.jssp import load_jssp_instance, random_instance, solve_jssp, write_taillard
from crab_gym.envs.realm.common.env import RealmEnv
from crab_gym.envs.realm.jobshop.env import JobShopEnv
from crab_gym.envs.realm.jobshop.heuristics import RULES, run_rule
from crab_gym.envs.realm.jobshop.references import reference_plan
from crab_gym.envs.realm.jobshop.sim import replay_order

from .helpers import ENV_ID, check_feasible, ensure_registered, semi_active_makespan

ensure_registered()


def dispatch(job):
    return (np.int64(0), {"job": np.int64(job)})


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"instance": "la01", "render_mode": "rgb_array"},
        {"instance": "ft06", "render_mode": "ansi", "reward_mode": "makespan"},
        {"generator": (4, 3)},
    ],
)
def test_check_env_through_gym_make(kwargs):
    env = gym.make(ENV_ID, **kwargs)
    check_env(env.unwrapped)
    env.close()


def test_default_env_and_spaces():
    env = gym.make(ENV_ID)
    obs, info = env.reset(seed=0)
    base = env.unwrapped
    assert base.instance.name == "ft06"
    assert set(obs) == {"processing_time", "machine", "done", "lower_bound", "machine_available", "action_mask"}
    assert obs["processing_time"].shape == (6, 6) and obs["machine_available"].shape == (6,)
    assert obs["action_mask"].tolist() == [1] * 6
    assert base.action_masks().tolist() == [True] * 6
    assert info["reference"] == 55 and info["reference_kind"] == "optimum"
    assert [t["function"]["name"] for t in base.tools()] == ["dispatch", "submit_plan"]


@pytest.mark.parametrize("rule", list(RULES))
def test_every_rule_gives_a_feasible_schedule_with_the_stated_makespan(rule):
    env = JobShopEnv("ta01")
    info = run_rule(env, RULES[rule])
    inst = load_jssp_instance("ta01")
    solution = info["solution"]
    recomputed, starts = semi_active_makespan(inst.durations, inst.machines, solution["sequence"])
    check_feasible(inst.durations, inst.machines, starts)
    assert recomputed == solution["makespan"] == info["metrics"]["makespan"] == info["makespan"]
    listed = {(o["job"], o["op"]): o["start"] for o in solution["schedule"]}
    assert listed == starts
    m = info["metrics"]
    assert m["planning_quality"] == 1.0 and m["constraint_satisfaction"] == 1.0
    ref = 1231  # the best known makespan (ta01's proven optimum) is the reference
    assert m["reference_makespan"] == ref and reference_plan(inst).makespan >= ref
    assert m["optimality"] == pytest.approx(min(1.0, ref / recomputed))
    assert m["gap"] == pytest.approx(recomputed / ref - 1)
    assert m["best_known"] == 1231 and m["best_known_kind"] == "optimum"
    assert m["gap_to_best_known"] == pytest.approx(recomputed / 1231 - 1)


def test_rules_and_their_tie_breaking():
    env = JobShopEnv("ft06")
    obs, _ = env.reset()
    # ft06 first operations: durations 1, 8, 5, 5, 9, 3
    assert RULES["SPT"].select(obs) == 0
    assert RULES["LPT"].select(obs) == 4
    assert RULES["MOR"].select(obs) == 0  # all tie at 6 operations: lowest index
    assert RULES["FIFO"].select(obs) == 0  # all ready at 0: lowest index
    assert RULES["MWKR"].select(obs) == 1  # job totals 26, 47, 34, 35, 25, 30
    mask = obs["action_mask"].copy()
    mask[[0, 4]] = 0
    assert RULES["SPT"].select(obs, mask) == 5 and RULES["LPT"].select(obs, mask) == 1
    assert RULES["SPT"](obs, mask) == {"name": "dispatch", "arguments": {"job": 5}}


def test_optimal_replay_through_dispatch_actions():
    inst = load_jssp_instance("ft06")
    result = solve_jssp(inst, time_limit=20.0, num_workers=2)
    env = gym.make(ENV_ID, instance="ft06")
    env.reset(seed=0)
    total = 0.0
    for job in replay_order(result.detail["starts"]):
        obs, reward, terminated, truncated, info = env.step(dispatch(job))
        assert info["valid"], info["error"]
        total += reward
    assert terminated and info["makespan"] == 55
    assert info["metrics"]["optimality"] == 1.0
    assert info["sub_goals_passed"] and all(n.endswith("_completed") for n in info["sub_goals_passed"])
    assert info["completeness"] == 1.0 and total == pytest.approx(1.0)


def test_submit_plan_in_realm_shape():
    env = JobShopEnv("ft06")
    env.reset()
    plan = run_rule(JobShopEnv("ft06"), RULES["MWKR"])["solution"]["sequence"]
    obs, reward, terminated, _, info = env.step({"name": "submit_plan", "arguments": {"sequence": plan}})
    assert info["valid"] and terminated
    expected, _ = semi_active_makespan(env.instance.durations, env.instance.machines, plan)
    assert info["solution"]["sequence"] == plan and info["makespan"] == expected
    # the whole plan completes every job (completeness 0 -> 1) and scores its optimality ratio
    assert info["completeness"] == 1.0
    assert reward == pytest.approx(0.5 * 1.0 + 0.5 * 55 / expected)


def test_submit_plan_after_some_dispatches_keeps_them():
    env = JobShopEnv("ft06")
    env.reset()
    full = run_rule(JobShopEnv("ft06"), RULES["FIFO"])["solution"]
    order = sorted(full["schedule"], key=lambda o: (o["start"], o["job"]))
    for op in order[:10]:
        env.step(dispatch(op["job"]))
    _, _, terminated, _, info = env.step({"name": "submit_plan", "arguments": {"sequence": full["sequence"]}})
    assert info["valid"], info["error"]
    assert terminated and info["makespan"] == full["makespan"]


def _state(env):
    return env.schedule.snapshot(), env.completeness, env._episode_steps


@pytest.mark.parametrize(
    "action, fragment",
    [
        (dispatch(0), "job 0 has no operation left to schedule (masked)"),
        ((np.int64(0), {"job": np.int64(6)}), "job: 6 is out of range 0..5"),
        ((np.int64(0), {"job": np.int64(-1)}), "job: -1 is out of range 0..5"),
        ((np.int64(0), {"jobs": np.int64(1)}), "missing key 'job'"),
        ((np.int64(7), {"job": np.int64(1)}), "action index 7 is out of range"),
        ("dispatch job 1", "expected an (action index, arguments) pair"),
        ({"name": "dispatch", "arguments": {"job": "two"}}, "valid integer"),
        ({"name": "dispatch", "arguments": {"job": 1, "when": 3}}, "'when' is not a parameter"),
        ({"name": "dispatch", "arguments": "{not json"}, "not valid JSON"),
        ({"name": "teleport", "arguments": {}}, "unknown action"),
        ({"name": "submit_plan", "arguments": {"sequence": [[0, 1]]}}, "6 lists"),
        ({"name": "submit_plan", "arguments": {"sequence": [[0, 1, 2, 3, 4, 5]] * 6}}, "must start with"),
        ({"name": "submit_plan", "arguments": {"sequence": [[9]]}}, "less than or equal to 5"),
    ],
)
def test_masked_and_malformed_actions_change_nothing(action, fragment):
    env = JobShopEnv("ft06", invalid_action_penalty=0.25)
    env.reset(seed=0)
    for _ in range(6):
        env.step(dispatch(0))  # job 0 is now finished, masked
    env.step(dispatch(2))
    before = _state(env)
    obs_before = env._get_obs()
    obs, reward, terminated, truncated, info = env.step(action)
    assert not info["valid"] and fragment in info["error"], info["error"]
    assert reward == -0.25 and not terminated and not truncated
    assert _state(env) == before
    for key in obs:
        np.testing.assert_array_equal(obs[key], obs_before[key])
    assert info["scheduled"] is None and info["sub_goals_passed"] == []
    assert set(info) == {
        "action", "valid", "error", "completeness", "sub_goals_passed", "metrics", "solution",
        "makespan", "lower_bound", "reference", "reference_kind", "best_known", "scheduled",
    }


def test_fast_path_matches_the_generic_path():
    """The same episode through space elements (fast path), tool calls and an int subclass
    the fast path does not take must give identical observations, rewards and infos."""
    class MyInt(int):
        pass

    rng = np.random.default_rng(3)
    envs = [JobShopEnv("la01", reward_mode=mode) for mode in ("default", "default", "default", "makespan")]
    outs = [e.reset(seed=0) for e in envs]
    done = False
    while not done:
        legal = np.flatnonzero(outs[0][0]["action_mask"])
        job = int(legal[rng.integers(len(legal))])
        if rng.random() < 0.1:
            job = int(rng.integers(10))  # sometimes a masked choice
        actions = [
            dispatch(job),
            {"name": "dispatch", "arguments": {"job": job}},
            (0, {"job": MyInt(job)}),
            dispatch(job),
        ]
        outs = [e.step(a) for e, a in zip(envs, actions)]
        first = outs[0]
        for other in outs[1:3]:
            for key in first[0]:
                np.testing.assert_array_equal(first[0][key], other[0][key])
            assert first[1:4] == other[1:4]
            assert first[4] == other[4]
        done = first[2]
    assert envs[3].schedule.snapshot() == envs[0].schedule.snapshot()


def test_makespan_reward_sums_to_minus_makespan_plus_initial_bound():
    env = gym.make(ENV_ID, instance="ta01", reward_mode="makespan")
    obs, info = env.reset(seed=0)
    start_bound = info["lower_bound"]
    total = 0.0
    terminated = False
    rule = RULES["MOR"]
    while not terminated:
        obs, reward, terminated, _, info = env.step(rule(obs))
        assert reward <= 0
        total += reward
    assert total == pytest.approx(start_bound - info["makespan"])


def test_default_return_is_progress_plus_optimality():
    env = JobShopEnv("ta01")
    obs, info = env.reset()
    total = 0.0
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(RULES["FIFO"](obs))
        total += reward
    ratio = 1231 / info["makespan"]  # against ta01's optimum, not the stored plan
    assert info["makespan"] == 1486 and info["reference"] == 1231
    # a complete schedule passes every job sub-goal: completeness 1, its quality is the ratio
    assert info["completeness"] == 1.0
    assert total == pytest.approx(0.5 * 1.0 + 0.5 * ratio)


def test_generator_gives_fresh_seeded_instances():
    env = JobShopEnv(generator={"n_jobs": 5, "n_machines": 4}, reference_solve="inline")
    env.reset(seed=11)
    a = env.instance
    env.reset()
    b = env.instance
    env.reset(seed=11)
    assert env.instance.same_data(a) and not b.same_data(a)
    ref = env.reference  # no best known value: the solver's (a 5x4 instance is proven optimal)
    assert ref.extra["reference_kind"] == "optimum" and ref.value >= a.trivial_lower_bound()
    assert ref.status == "OPTIMAL" and ref.source == "solved" and ref.bound == ref.value
    assert env.observation_space["processing_time"].high.max() == 99
    info = run_rule(env, RULES["SPT"], seed=5)
    assert info["metrics"]["optimality"] <= 1.0


def test_instance_from_path_object_and_reset_option(tmp_path):
    path = tmp_path / "ta01.txt"
    path.write_text(write_taillard(load_jssp_instance("ta01")))
    env = gym.make(ENV_ID, instance=str(path))
    _, info = env.reset()
    # a file with ta01's data gets ta01's stored plan and best known value (looked up by the data)
    plan = reference_plan(load_jssp_instance("ta01"))
    assert env.unwrapped.reference.plan == {"sequence": [list(r) for r in plan.sequence]}
    assert info["reference"] == info["best_known"] == 1231
    env2 = JobShopEnv(instance=random_instance(3, 3, 1))
    _, info = env2.reset(options={"instance": random_instance(3, 3, 2)})
    assert env2.instance.same_data(random_instance(3, 3, 2))
    with pytest.raises(ValueError, match="spaces are for 3x3"):
        env2.reset(options={"instance": "ft06"})


def test_rendering():
    env = JobShopEnv("ft06", render_mode="ansi")
    env.reset()
    env.step(dispatch(1))
    text = env.render()
    assert "ft06: 6 jobs x 6 machines | scheduled 1/36" in text
    assert "M1: j1[0-8)" in text
    env = JobShopEnv("la01", render_mode="rgb_array")
    run_rule(env, RULES["MWKR"])
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 10  # bars in several job colours


def test_describe_lists_remaining_operations_and_earliest_starts():
    import gymnasium as gym

    env = gym.make("Realm-P11-v0", instance="ft06").unwrapped
    env.reset(seed=0)
    env.step({"name": "dispatch", "arguments": {"job": 2}})  # job 2's first op: M2, 5 minutes
    text = env.describe()
    assert "scheduled 1/36 operations; makespan so far 5" in text
    assert "M2=5" in text
    # job 0 starts on M2 too (duration 1): it must wait for job 2's operation to end
    assert "job 0: next op 0 could start at 5; remaining (machine,duration): (M2,1) (M0,3)" in text
    assert "job 2: next op 1 could start at 5" in text
    assert "ft06" in env.task_description and "55 (optimum)" in env.task_description


def test_the_env_is_a_realm_env_that_only_fills_in_hooks():
    assert JobShopEnv.__bases__ == (RealmEnv,)
    for name in ("step", "reset", "_after_action", "_reset_state", "render"):
        assert name not in vars(JobShopEnv), name
    for section in ("## Description", "## Action Space", "## Observation Space", "## Rewards",
                    "## Starting State", "## Episode End", "## Arguments", "## Version History"):
        assert section in JobShopEnv.__doc__, section
