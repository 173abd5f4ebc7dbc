"""Python API mistakes get errors that say what to do (issue 28, item 4): a named policy given
an env it does not fit, MaskablePPO on an env whose observations SB3 cannot take, a misspelt
desktop keyword."""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.registry import REALM_IDS, NamedPolicy, PolicyMismatchError, policy_factories


@pytest.mark.parametrize(("policy", "env_id", "fits"), [
    ("spt", "Realm-P1-v0", "it fits Realm-P11-v0; policies that fit Realm-P1-v0: random, oracle, p1_insertion"),
    ("p7_greedy", "Realm-P3-v0", "it fits Realm-P7-v0; policies that fit Realm-P3-v0: random, oracle, do_nothing, "
                                 "ridesharing_greedy"),
])
def test_a_policy_given_an_env_it_does_not_fit_says_so(policy, env_id, fits):
    env = gym.make(env_id)
    for build in (policy_factories()[policy], NamedPolicy(policy)):
        with pytest.raises(PolicyMismatchError) as info:
            build(env)
        assert str(info.value).startswith(f"policy {policy!r} does not fit {env_id}: {fits}")
    unwrapped = type(env.unwrapped)()  # an env built from its class, without gym.make, is checked too
    with pytest.raises(PolicyMismatchError, match=f"does not fit {env_id}"):
        policy_factories()[policy](unwrapped)


def test_a_policy_on_an_env_it_fits_is_built():
    env = gym.make("Realm-P11-v0")
    obs, info = env.reset(seed=0)
    assert env.action_space.contains(env.action_space.sample())
    assert policy_factories()["spt"](env)(obs, info) is not None


def test_maskable_ppo_on_the_desktop_names_the_part_sb3_cannot_take():
    pytest.importorskip("sb3_contrib")
    from crab_gym.baselines.sb3 import train_maskable_ppo

    with pytest.raises(ValueError) as info:
        train_maskable_ppo("CrabDesktop-v0", 64, n_envs=1)
    message = str(info.value)
    assert message.startswith("CrabDesktop-v0: Stable-Baselines3 cannot take this env's observations: "
                              "its part 'active_window' is Text")
    assert "FilterObservation(env, ['screenshot'])" in message


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_every_realm_env_passes_the_sb3_observation_check(env_id):
    pytest.importorskip("sb3_contrib")
    from crab_gym.baselines.sb3 import make_masked_env

    make_masked_env(env_id).close()


@pytest.mark.parametrize(("keyword", "nearest"), [("tsk", "task"), ("Task", "task"), ("remote", "remote_url")])
def test_a_misspelt_desktop_keyword_says_did_you_mean(keyword, nearest):
    with pytest.raises(TypeError) as info:
        gym.make("CrabDesktop-v0", **{keyword: "x"})
    assert f"unknown keyword {keyword!r} (did you mean {nearest!r}?); valid keywords: task, render_mode" in str(info.value)


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_plain_maskable_ppo_multiinputpolicy_learns_on_every_realm_env(env_id):
    """The three-line recipe a user types first (issue 35/38): it learned nothing on P3/P4 before
    (TypeError deep in torch on a 2-D MultiDiscrete)."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from crab_gym.wrappers.discrete import DiscreteActions

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        env = DiscreteActions(gym.make(env_id))
        model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(32)
        obs, _ = env.reset(seed=0)
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert env.action_masks()[int(action)]
        env.close()
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_sb3_check_env_passes_through_discrete_actions(env_id):
    """SB3's own checker fails on a raw env (a OneOf action space is no SB3 space: a TypeError
    from numpy); docs/rl.md says to check DiscreteActions(env), which passes on every id."""
    pytest.importorskip("stable_baselines3")
    import warnings

    from stable_baselines3.common.env_checker import check_env

    from crab_gym.wrappers.discrete import DiscreteActions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3 suggests flattening 2-D observation parts
        check_env(DiscreteActions(gym.make(env_id)))


def test_train_maskable_ppo_shows_a_progress_bar_and_uses_one_thread(capsys):
    pytest.importorskip("sb3_contrib")
    import torch

    from crab_gym.baselines.sb3 import train_maskable_ppo

    threads = torch.get_num_threads()
    try:
        train_maskable_ppo("Realm-P11-v0", 64, env_kwargs={"instance": "ft06"},
                           ppo_kwargs={"n_steps": 64, "batch_size": 64, "n_epochs": 1})
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    err = capsys.readouterr().err
    assert "train Realm-P11-v0" in err and "100%" in err and "64.0/64.0" in err
