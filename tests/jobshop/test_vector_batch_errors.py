"""Issue 38, item 3: a J vector env checks the whole batch before any env moves: a bad entry
(NaN, a float past int64, the wrong length) raises a ValueError and leaves every env as it was;
a reset with the wrong number of seeds or a wrong-length reset_mask says so instead of an
IndexError (P11's vector env already did)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401


def _state(venv) -> list[np.ndarray]:
    return [v.copy() for v in venv.unwrapped._observation().values()]


@pytest.mark.parametrize("env_id", ["Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0", "Realm-P11-v0"])
@pytest.mark.parametrize("actions, fragment", [
    (np.array([0, 0, np.nan, 0]), "whole job indices"),
    (np.array([0, 0, 1e30, 0]), "whole job indices"),
    ([0, 1], "shape (4,)"),
    (np.array(["a", "b", "c", "d"]), "integer job indices"),
])
def test_a_bad_entry_moves_no_env(env_id, actions, fragment):
    venv = gym.make_vec(env_id, num_envs=4)
    venv.reset(seed=0)
    venv.step(np.zeros(4, dtype=np.int64))
    before = _state(venv)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        venv.step(actions)
    assert all((a == b).all() for a, b in zip(before, _state(venv)))


@pytest.mark.parametrize("env_id", ["Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0"])
def test_a_bad_reset_says_what_is_wrong(env_id):
    venv = gym.make_vec(env_id, num_envs=4)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="got 2 seeds for 4 envs"):
        venv.reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"reset_mask must have shape \(4,\), got \(2,\)"):
        venv.reset(options={"reset_mask": [True, False]})
    obs, _ = venv.reset(seed=[1, 2, 3, 4], options={"reset_mask": [True, False, True, False]})
    assert venv.observation_space.contains(obs)
