"""CrabEnv contract, on the small LampsEnv example (tests/core/toy_env.py)."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

from crab_gym.envs.base import INFO_KEYS

from .toy_env import LampsEnv


@pytest.fixture(scope="module", autouse=True)
def registered():
    gym.register("TestLamps-v0", entry_point="tests.core.toy_env:LampsEnv")
    yield
    gym.registry.pop("TestLamps-v0", None)


def test_check_env_passes_with_render_checks():
    check_env(gym.make("TestLamps-v0", render_mode="ansi").unwrapped)


def test_same_seed_same_trajectory():
    def rollout(seed):
        env = LampsEnv()
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs]
        for _ in range(12):
            step = env.step(env.action_space.sample())
            out.append(step)
            if step[2]:
                break
        return out

    assert data_equivalence(rollout(3), rollout(3))


def test_tool_call_and_element_give_the_same_step():
    a, b = LampsEnv(), LampsEnv()
    a.reset(seed=0)
    b.reset(seed=0)
    lamp = int(np.flatnonzero(~a.lit)[0])
    ra = a.step({"name": "switch_on", "arguments": {"lamp": lamp}})
    rb = b.step((0, {"lamp": np.int64(lamp)}))
    assert data_equivalence(ra, rb)


def test_invalid_actions_leave_state_unchanged_and_say_why():
    env = LampsEnv(invalid_action_penalty=0.1)
    env.reset(seed=0)
    lit_lamp = int(np.flatnonzero(env.lit)[0])
    before = (env.lit.copy(), list(env.order), env.completeness)
    cases = [
        ({"name": "switch_on", "arguments": {"lamp": lit_lamp}}, "already on"),  # masked
        ({"name": "switch_on", "arguments": {"lamp": 99}}, "less than or equal to 3"),  # range
        ({"name": "fly", "arguments": {}}, "unknown action"),  # unknown
        ((np.int64(0), {"lamp": "x"}), "lamp"),  # malformed element
        ("not an action", "pair"),
    ]
    for bad, fragment in cases:
        obs, reward, terminated, truncated, info = env.step(bad)
        assert info["valid"] is False
        assert fragment in info["error"]
        assert reward == pytest.approx(-0.1)
        assert not terminated and not truncated
        assert np.array_equal(env.lit, before[0]) and env.order == before[1]
        assert env.completeness == before[2]


def test_reward_is_progress_plus_terminal_optimality_and_info_keys_fixed():
    env = LampsEnv()
    _, info0 = env.reset(seed=0)
    keys = set(info0)
    assert keys == set(INFO_KEYS)
    total, info = 0.0, info0
    start_completeness = env.completeness
    while True:
        lamp = int(np.flatnonzero(~env.lit)[0])
        _, reward, terminated, _, info = env.step({"name": "switch_on", "arguments": {"lamp": lamp}})
        assert set(info) == keys
        total += reward
        if terminated:
            break
    # optimal play: optimality 1 -> return = 0.5 * (1 - start completeness) + 0.5
    assert total == pytest.approx(0.5 * (1 - start_completeness) + 0.5)
    assert info["metrics"] == {"moves": 3} and info["solution"]["order"] == env.order
    assert not env.action_masks().any()
    _, _, _, _, after = env.step({"name": "switch_all_off", "arguments": {}})
    assert after["valid"] is False and "episode is over" in after["error"]


def test_wasted_moves_lower_the_optimality_term():
    env = LampsEnv()
    env.reset(seed=0)
    env.step({"name": "switch_all_off"})
    total = 0.0
    while not env.lit.all():
        lamp = int(np.flatnonzero(~env.lit)[0])
        _, reward, terminated, _, info = env.step({"name": "switch_on", "arguments": {"lamp": lamp}})
        total += reward
    assert info["metrics"]["moves"] == 5
    assert total == pytest.approx(0.5 * 1.0 + 0.5 * 3 / 5)


def test_masks_and_tools():
    env = LampsEnv()
    env.reset(seed=2)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.codec.n_flat,)
    for i in range(env.codec.n_flat):
        call = env.codec.flat_to_call(i)
        info = copy.deepcopy(env).step(call)[4]
        assert info["valid"] == bool(mask[i])
    names = [t["function"]["name"] for t in env.tools("openai")]
    assert names == ["switch_on", "switch_all_off"]
    assert env.tools("anthropic")[0]["input_schema"]["required"] == ["lamp"]


def test_step_before_reset_is_an_error():
    with pytest.raises(gym.error.ResetNeeded):
        LampsEnv().step({"name": "switch_all_off"})
