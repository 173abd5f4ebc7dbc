"""The batched job-shop engine on its two newer paths: wide machine rows (64 slots or more,
gathered only up to the fullest row's sentinel) and jobs of different lengths (J3's padding,
never dispatched), and the J3 vector env's copy semantics."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.envs.realm.jobshop.env import JobShopEnv
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.vector_env import JobShopVectorEnv

from .test_vector_env import drive_both


def _crowded(seed: int, n_jobs: int = 9, n_ops: int = 8, n_machines: int = 1) -> JSSPInstance:
    """Every operation on one or two machines: up to 72 operations on a machine: rows of 64 slots or more."""
    rng = np.random.default_rng(seed)
    durations = rng.integers(0, 6, size=(n_jobs, n_ops))  # zero durations included
    machines = rng.integers(0, n_machines, size=(n_jobs, n_ops))
    return JSSPInstance(durations=tuple(map(tuple, durations.tolist())), machines=tuple(map(tuple, machines.tolist())),
                        n_machines=n_machines)


@pytest.mark.parametrize("n_machines", [1, 2])
def test_p11_vector_env_equals_single_envs_on_wide_machine_rows(n_machines):
    insts = [_crowded(s, n_machines=n_machines) for s in range(3)]
    vec = JobShopVectorEnv(3, insts, reference=100.0, invalid_action_penalty=0.5)
    assert vec.batch.width >= 64  # the path that gathers only the slots in use
    singles = [JobShopEnv(inst, reference=100.0, invalid_action_penalty=0.5) for inst in insts]
    episodes = drive_both(vec, singles, np.random.default_rng(n_machines), 3 * 72 + 5, invalid_share=0.1)
    assert episodes >= 3


def _play(vec, singles, steps: int, rng: np.random.Generator) -> list[dict]:
    """Step the vector env and the singles alike (legal random jobs); the vector env's
    observations as returned, and the singles' solutions at their ends."""
    returned = []
    pending = [False] * len(singles)
    for _ in range(steps):
        actions = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in vec.unwrapped.action_masks()]
        obs, _, terminated, _, _ = vec.step(actions)
        returned.append(obs)
        for i, env in enumerate(singles):
            if pending[i]:
                env.reset()
                pending[i] = False
                continue
            _, _, term, _, info = env.step((0, {"job": actions[i]}))
            if term:
                assert vec.unwrapped.solution(i)["sequence"] == info["solution"]["sequence"]
                assert vec.unwrapped.solution(i)["makespan"] == info["metrics"]["makespan"]
            pending[i] = term
    return returned


def test_j3_vector_env_returns_copies_that_later_steps_leave_alone():
    names = ["j3_small_00", "j3_small_03"]
    vec = gym.make_vec("Realm-J3-v0", num_envs=2, vectorization_mode="vector_entry_point", instances=names)
    singles = [gym.make("Realm-J3-v0", instance=name).unwrapped for name in names]
    obs, _ = vec.reset(seed=0)
    for env in singles:
        env.reset(seed=0)
    kept = [{k: v.copy() for k, v in obs.items()}]
    held = [obs]
    steps = 2 * max(e.instance.n_ops for e in singles) + 4  # through both ends and autoresets
    for obs in _play(vec, singles, steps, np.random.default_rng(3)):
        held.append(obs)
        kept.append({k: v.copy() for k, v in obs.items()})
    for then, now in zip(kept, held, strict=True):  # nothing handed out changed afterwards
        for key in then:
            np.testing.assert_array_equal(then[key], now[key], err_msg=key)
    assert any(not np.array_equal(kept[0]["done"], k["done"]) for k in kept[1:])


def test_j3_vector_env_views_are_read_only_and_follow_the_state():
    vec = gym.make_vec("Realm-J3-v0", num_envs=2, vectorization_mode="vector_entry_point",
                       instance="j3_small_00", copy=False)
    obs, _ = vec.reset(seed=0)
    for key in ("done", "lower_bound", "machine_available", "action_mask", "processing_time", "machine", "n_ops"):
        with pytest.raises(ValueError):
            obs[key][0].flat[0] = 1
    single = gym.make("Realm-J3-v0", instance="j3_small_00").unwrapped
    single.reset(seed=0)
    new, *_ = vec.step([4, 4])
    expected, *_ = single.step((0, {"job": 4}))
    for key in expected:
        np.testing.assert_array_equal(new[key][1], expected[key], err_msg=key)
