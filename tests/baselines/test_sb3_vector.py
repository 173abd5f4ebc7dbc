"""SB3VectorEnv: the native P11 vector env under Stable-Baselines3's VecEnv contract."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401

pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402

from crab_gym.baselines.sb3 import quiet_logger  # noqa: E402
from crab_gym.baselines.sb3_vector import SB3VectorEnv  # noqa: E402


def make(n: int = 3) -> SB3VectorEnv:
    return SB3VectorEnv(gym.make_vec("Realm-P11-v0", num_envs=n, instance="ft06"))


def test_same_step_reset_terminal_observation_and_episode_stats():
    venv = make()
    obs = venv.reset()
    assert obs["done"].shape == (3, 6, 6) and obs["done"].sum() == 0
    assert is_masking_supported(venv)
    steps = 0
    while True:
        masks = get_action_masks(venv)
        assert masks.shape == (3, 6) and masks.any(axis=1).all()  # never all masked
        obs, rewards, dones, infos = venv.step(masks.argmax(axis=1))
        steps += 1
        if dones.any():
            break
    assert steps == 36 and dones.all()
    for info in infos:
        assert info["terminal_observation"]["done"].sum() == 36  # the final state
        assert info["episode"]["l"] == 36
        assert info["episode"]["r"] == pytest.approx(0.5 + 0.5 * info["optimality"])
        assert info["makespan"] > 0
    assert obs["done"].sum() == 0  # already restarted
    assert rewards.dtype == np.float32


def test_maskable_ppo_trains_on_it_without_invalid_actions():
    from sb3_contrib import MaskablePPO

    venv = make(4)
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=36, batch_size=72, n_epochs=1, device="cpu", seed=0)
    model.set_logger(quiet_logger())
    model.learn(36 * 4 * 2)
    assert len(model.ep_info_buffer) == 8
    assert all(0.5 < e["r"] <= 1.0 for e in model.ep_info_buffer)  # every job done: no invalid step
