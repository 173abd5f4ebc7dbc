"""The J3 vector env's ``copy=True`` observations, refreshed row by row from copies nobody
holds any more (:class:`RecycledObservations`): each equals the state when it was handed out,
and nothing a caller still holds (the dict, one array, a view of a row) ever changes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.envs.realm.jobshop.recycled_obs import RecycledObservations

#: (id, arguments): J3 on three instances, and on one instance shared by every env.
SETUPS = {
    "j3": ("Realm-J3-v0", {"instances": ["j3_small_00", "j3_small_03", "j3_small_05"]}),
    "j3-one-instance": ("Realm-J3-v0", {"instance": "j3_medium_02"}),
}


def _pair(setup: str) -> tuple[gym.vector.VectorEnv, gym.vector.VectorEnv]:
    env_id, kwargs = SETUPS[setup]
    make = gym.make_vec
    copied = make(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    views = make(env_id, num_envs=3, vectorization_mode="vector_entry_point", copy=False, **kwargs)
    return copied, views


@pytest.mark.parametrize("setup", list(SETUPS))
def test_recycled_copies_equal_the_state_and_what_is_held_never_changes(setup):
    copied, views = _pair(setup)
    rng = np.random.default_rng(7)
    obs, _ = copied.reset(seed=0)
    views.reset(seed=0)
    held: list[tuple[object, object]] = []  # (what the caller kept, a deep copy of it then)
    reused = 0
    seen_buffers: set[int] = set()
    for step in range(400):  # several episodes per env: autoresets and a reset_mask reset
        masks = copied.unwrapped.action_masks()
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        if rng.random() < 0.05:
            actions[0] = 999  # an invalid action changes nothing
        if step == 200:
            mask = np.array([False, True, False])
            obs, _ = copied.reset(options={"reset_mask": mask})
            expected, _ = views.reset(options={"reset_mask": mask})
        else:
            obs, *_ = copied.step(actions)
            expected, *_ = views.step(actions)
        for key, value in expected.items():
            np.testing.assert_array_equal(obs[key], value, err_msg=f"step {step}: {key}")
        pointer = obs["lower_bound"].__array_interface__["data"][0]
        reused += pointer in seen_buffers
        seen_buffers.add(pointer)
        kind = step % 7
        if kind == 0:
            held.append((obs, {k: v.copy() for k, v in obs.items()}))
        elif kind == 3:
            held.append((obs["done"], obs["done"].copy()))
        elif kind == 5:
            held.append((obs["lower_bound"][1], obs["lower_bound"][1].copy()))
        del obs, expected
    for kept, then in held:
        if isinstance(kept, dict):
            for key in then:
                np.testing.assert_array_equal(kept[key], then[key], err_msg=key)
        else:
            np.testing.assert_array_equal(kept, then)
    assert reused > 200  # most copies handed out were refreshed ones, not made anew


def test_a_copy_is_refreshed_whole_when_the_log_no_longer_reaches_it():
    source = {"rows": np.zeros((2, 3, 4), dtype=np.float32), "small": np.zeros(5)}
    copies = RecycledObservations(source, ("rows",), keep=2)
    first = copies.take()  # held through the steps below
    for step in range(5):
        source["rows"][step % 2, 1] = step + 1
        source["small"][:] = step + 1
        copies.changed(np.array([(step % 2) * 3 + 1]))
        now = copies.take()
        np.testing.assert_array_equal(now["rows"], source["rows"])
        np.testing.assert_array_equal(now["small"], source["small"])
        del now
    assert first["rows"].sum() == 0 and first["small"].sum() == 0
    old = first["rows"].__array_interface__["data"][0]
    del first  # now free, five steps behind: more than the log of two steps reaches
    now = copies.take()
    assert now["rows"].__array_interface__["data"][0] == old
    np.testing.assert_array_equal(now["rows"], source["rows"])
    np.testing.assert_array_equal(now["small"], source["small"])


def test_views_pile_nothing_up_across_autoresets():
    """With ``copy=False`` no observation is taken from the copies, so the env notes no rows
    for them (else a long training run would keep every restart's rows)."""
    _, views = _pair("j3")
    views.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(300):  # several autoresets per env
        views.step([int(rng.choice(np.flatnonzero(m))) for m in views.unwrapped.action_masks()])
    assert views.unwrapped._copies._pending == []
