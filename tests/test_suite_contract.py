"""The contract every REALM env of the suite keeps (DESIGN.md, "Gymnasium contract").

Each env has its own tests; this file checks the shared promises on all of them at once:
``check_env`` with render checks, determinism under a seed (observations, rewards and whole
``info`` dicts, so no wall-clock value can hide there), a fixed ``info`` key set, masks that
match what ``step`` accepts, and a return in [0, 1] under the default weights.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

import crab_gym  # noqa: F401
from crab_gym.baselines import RandomPolicy
from crab_gym.envs.base import INFO_KEYS
from crab_gym.envs.registration import realm_ids

REALM_IDS = realm_ids()


def rollout(env_id: str, seed: int, max_steps: int = 400) -> list:
    env = gym.make(env_id)
    policy = RandomPolicy(env, seed=seed)
    obs, info = env.reset(seed=seed)
    out = [(obs, info)]
    for _ in range(max_steps):
        step = env.step(policy(obs, info))
        out.append(step)
        obs, info = step[0], step[4]
        if step[2] or step[3]:
            break
    env.close()
    return out


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_check_env_with_render_modes(env_id):
    env = gym.make(env_id)
    assert set(env.metadata["render_modes"]) == {"ansi", "rgb_array"}
    check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_seeded_rollouts_are_identical_including_info(env_id):
    first, second = rollout(env_id, seed=7), rollout(env_id, seed=7)
    assert len(first) == len(second)
    assert data_equivalence(first, second)


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_info_keys_fixed_return_in_unit_interval_and_metrics_at_end(env_id):
    steps = rollout(env_id, seed=1)
    keys = set(steps[0][1])
    assert set(INFO_KEYS) <= keys
    assert all(set(s[4]) == keys for s in steps[1:])
    last = steps[-1]
    assert last[2], f"{env_id}: random legal play did not finish within the step cap"
    total = sum(s[1] for s in steps[1:])
    assert -1e-9 <= total <= 1.0 + 1e-9
    metrics = last[4]["metrics"]
    for name in ("planning_quality", "optimality", "constraint_satisfaction"):
        assert 0.0 <= metrics[name] <= 1.0, (env_id, name, metrics[name])
    assert last[4]["solution"], "the plan in REALM's shape is reported at the end"


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_mask_matches_what_step_accepts(env_id):
    import copy

    env = gym.make(env_id).unwrapped
    env.reset(seed=3)
    mask = env.action_masks()
    assert mask.any()
    rng = np.random.default_rng(0)
    for flat in rng.choice(env.codec.n_flat, size=min(env.codec.n_flat, 12), replace=False):
        probe = copy.deepcopy(env)
        info = probe.step(env.codec.flat_to_call(int(flat)))[4]
        assert info["valid"] == bool(mask[flat]), (env_id, env.codec.flat_to_call(int(flat)), info["error"])
