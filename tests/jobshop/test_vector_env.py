"""The native vector env of Realm-P11-v0 equals N single envs, step for step.

Every comparison drives the vector env and N single envs with the same actions (legal ones,
masked ones and out-of-range ones) through several autoresets, and asserts equal
observations, rewards, terminations and final makespan and optimality.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crab_gym  # noqa: F401
from crab_gym.envs.realm.jobshop.env import JobShopEnv
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.vector_env import JobShopVectorEnv


def drive_both(vec: JobShopVectorEnv, singles: list[JobShopEnv], rng: np.random.Generator, steps: int,
               invalid_share: float = 0.15, seed: int | None = 0) -> int:
    """Step both with the same actions; assert equality; return the episodes completed."""
    n = vec.num_envs
    obs, _ = vec.reset(seed=seed)
    for i, env in enumerate(singles):
        single_obs, _ = env.reset(seed=None if seed is None else seed + i)
        assert_same_obs(single_obs, obs, i)
    pending = np.zeros(n, dtype=bool)
    episodes = 0
    n_jobs = vec.single_action_space.n
    for _ in range(steps):
        masks = vec.action_masks()
        actions = np.array([
            int(rng.integers(-1, n_jobs + 1)) if rng.random() < invalid_share else int(rng.choice(np.flatnonzero(m)))
            for m in masks
        ])
        obs, rewards, terminated, truncated, info = vec.step(actions)
        assert not truncated.any()
        for i, env in enumerate(singles):
            if pending[i]:  # NEXT_STEP autoreset: the action is ignored
                single_obs, _ = env.reset()
                single_reward, single_term, single_info = 0.0, False, None
            else:
                single_obs, single_reward, single_term, _, single_info = env.step((0, {"job": int(actions[i])}))
            assert_same_obs(single_obs, obs, i)
            assert rewards[i] == single_reward
            assert bool(terminated[i]) == single_term
            if single_info is not None:
                if single_info["valid"]:
                    assert "valid" not in info or info["valid"][i]
                else:
                    assert not info["valid"][i] and info["error"][i]
            if single_term:
                episodes += 1
                metrics = single_info["metrics"]
                assert info["_makespan"][i] and info["makespan"][i] == metrics["makespan"]
                if metrics["optimality_pending"]:  # a generated instance: measured later, by the runner
                    assert metrics["optimality"] is None and info["optimality_pending"][i]
                    assert np.isnan(info["optimality"][i])
                else:
                    assert info["optimality"][i] == metrics["optimality"]
                if min(min(r) for r in env.instance.durations) > 0:
                    assert vec.solution(i)["sequence"] == single_info["solution"]["sequence"]
            elif "makespan" in info:
                assert not info["_makespan"][i]
        pending = terminated.copy()
    return episodes


def assert_same_obs(single: dict, batched: dict, i: int) -> None:
    assert set(single) == set(batched)
    for key, value in single.items():
        assert batched[key][i].dtype == value.dtype, key
        assert np.array_equal(batched[key][i], value), key


@st.composite
def instances(draw: st.DrawFn) -> list[JSSPInstance]:
    """1-3 random instances of one size; machines are any assignment (repeats allowed)."""
    n_jobs = draw(st.integers(1, 5))
    n_ops = draw(st.integers(1, 4))
    n_machines = draw(st.integers(1, min(4, n_jobs * n_ops)))
    count = draw(st.integers(1, 3))
    out = []
    for _ in range(count):
        durations = draw(st.lists(st.lists(st.integers(0, 9), min_size=n_ops, max_size=n_ops), min_size=n_jobs, max_size=n_jobs))
        machines = draw(st.lists(
            st.lists(st.integers(0, n_machines - 1), min_size=n_ops, max_size=n_ops), min_size=n_jobs, max_size=n_jobs
        ))
        out.append(JSSPInstance(
            durations=tuple(map(tuple, durations)), machines=tuple(map(tuple, machines)), n_machines=n_machines
        ))
    return out


@settings(max_examples=40, deadline=None)
@given(insts=instances(), seed=st.integers(0, 2**16), mode=st.sampled_from(["default", "makespan"]))
def test_equal_to_single_envs_on_random_instances(insts, seed, mode):
    vec = JobShopVectorEnv(len(insts), insts, reward_mode=mode, invalid_action_penalty=0.25)
    singles = [JobShopEnv(inst, reward_mode=mode, invalid_action_penalty=0.25) for inst in insts]
    steps = 3 * (insts[0].n_jobs * insts[0].n_ops + 1)
    drive_both(vec, singles, np.random.default_rng(seed), steps)


@pytest.mark.parametrize("name", ["ft06", "la01", "orb07", "ta01"])
def test_equal_to_single_envs_on_shipped_instances(name):
    """orb07 has zero-duration operations."""
    vec = gym.make_vec("Realm-P11-v0", num_envs=3, vectorization_mode="vector_entry_point", instance=name)
    singles = [gym.make("Realm-P11-v0", instance=name).unwrapped for _ in range(3)]
    size = vec.unwrapped.batch.n_total
    episodes = drive_both(vec, singles, np.random.default_rng(0), 2 * size + 3, invalid_share=0.05)
    assert episodes >= 3


def test_generated_instances_are_drawn_per_env_from_seed_plus_index():
    vec = JobShopVectorEnv(3, generator=(4, 3))
    singles = [JobShopEnv(generator=(4, 3)) for _ in range(3)]
    episodes = drive_both(vec, singles, np.random.default_rng(5), 45, invalid_share=0.0, seed=11)
    assert episodes >= 6
    durations = {vec.batch.instances[i].durations for i in range(3)}
    assert len(durations) == 3  # each env plays its own instance


def test_make_vec_defaults_to_the_native_vector_env_and_batches_the_single_spaces():
    vec = gym.make_vec("Realm-P11-v0", num_envs=5, instance="ft06")
    single = gym.make("Realm-P11-v0", instance="ft06")
    assert isinstance(vec.unwrapped, JobShopVectorEnv)
    assert vec.single_observation_space == single.observation_space
    assert vec.single_action_space == gym.spaces.Discrete(6)
    obs, info = vec.reset(seed=0)
    assert info == {}
    assert vec.observation_space.contains(obs)
    assert vec.unwrapped.action_masks().shape == (5, 6)


def test_invalid_actions_change_nothing_and_say_why():
    vec = JobShopVectorEnv(2, "ft06", invalid_action_penalty=1.0)
    vec.reset(seed=0)
    for _ in range(6):  # job 0 has 6 operations
        vec.step(np.array([0, 1]))
    before = {k: v.copy() for k, v in vec._observation().items()}
    obs, rewards, terminated, _, info = vec.step(np.array([0, 9]))
    assert rewards.tolist() == [-1.0, -1.0]
    assert info["valid"].tolist() == [False, False]
    assert info["error"][0] == "job 0 has no operation left to schedule (masked)"
    assert info["error"][1] == "job 9 is outside the action space (jobs 0..5)"
    for key, value in before.items():
        assert np.array_equal(obs[key], value)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        vec.step(np.array([0, 1, 2]))


def test_reset_mask_restarts_only_the_marked_envs_and_pending_envs_allow_every_job():
    vec = JobShopVectorEnv(2, "ft06")
    vec.reset(seed=0)
    for _ in range(36):
        obs, _, terminated, _, info = vec.step(vec.action_masks().argmax(axis=1))
    assert terminated.all() and info["_makespan"].all()
    assert not obs["action_mask"].any()
    assert vec.action_masks().all()  # awaiting the autoreset: the action is ignored
    obs, _ = vec.reset(options={"reset_mask": np.array([True, False])})
    assert obs["done"][0].sum() == 0 and obs["done"][1].sum() == 36
    with pytest.raises(ValueError, match="unknown reset option"):
        vec.reset(options={"reset_mak": [True, True]})


def test_observations_are_copies_unless_asked_otherwise():
    vec = JobShopVectorEnv(2, "ft06")
    obs, _ = vec.reset(seed=0)
    vec.step(np.array([0, 0]))
    assert obs["done"].sum() == 0  # the first observation did not change under the user
    views = JobShopVectorEnv(2, "ft06", copy=False)
    obs, _ = views.reset(seed=0)
    with pytest.raises(ValueError):
        obs["done"][0, 0, 0] = 1
    with pytest.raises(ValueError):
        obs["processing_time"][0, 0, 0] = 1.0


def test_bad_arguments_say_what_is_accepted():
    with pytest.raises(ValueError, match="num_envs"):
        JobShopVectorEnv(0)
    with pytest.raises(ValueError, match="2 instances for 3 envs"):
        JobShopVectorEnv(3, ["ft06", "ft06"])
    with pytest.raises(ValueError, match="the batch is 6x6"):
        JobShopVectorEnv(2, ["ft06", "la01"])


def test_a_misspelt_keyword_names_the_nearest_one():
    with pytest.raises(TypeError, match=r"JobShopVectorEnv: unknown keyword 'generatr' \(did you mean 'generator'\?\)"):
        JobShopVectorEnv(2, generatr=(4, 3))
    with pytest.raises(TypeError, match=r"unknown keyword 'instanse' \(did you mean 'instance'\?\)"):
        gym.make_vec("Realm-P11-v0", num_envs=2, vectorization_mode="vector_entry_point", instanse="ft06")
