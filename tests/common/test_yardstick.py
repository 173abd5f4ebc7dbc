"""The declared RealmEnv interface and the yardstick part (issue 37).

A family's required hooks are abstract (a class missing one cannot be made, and the error
names it); the reference and its deferred solves live in ``env.yardstick``, whose
``lookup()`` answers a Reference or a Pending value -- no exception reaches the env.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.datasets import generate_instance
from crab_gym.envs.realm.campus_tour.env import CampusTourEnv
from crab_gym.envs.realm.common.env import RealmEnv
from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.common.yardstick import Pending, Yardstick
from crab_gym.envs.registration import realm_ids
from crab_gym.evaluation.episode_runner import DefersScoring


def _play_random(env: gym.Env) -> dict:
    """A seeded random episode to its end (from the current state); the last info."""
    policy = RandomPolicy(env, seed=0)
    obs, info, done = None, {}, False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        done = terminated or truncated
    return info


def test_a_family_missing_a_required_hook_cannot_be_made_and_the_error_names_it():
    class NoRestart(CampusTourEnv):
        _restart = RealmEnv._restart  # the abstract declaration: as if never written

    with pytest.raises(TypeError, match="_restart"):
        NoRestart()


def test_the_abstract_hooks_are_the_documented_ones():
    required = {"_use_instance", "_check_fits", "_restart", "_get_obs", "_build_graph", "_is_terminated",
                "_agent_cost"}
    assert set(RealmEnv.__abstractmethods__) == required
    doc = RealmEnv.__doc__ or ""
    for hook in required:
        assert f"``{hook}``" in doc


def test_a_subclass_written_without_a_hook_is_abstract():
    class Partial(RealmEnv):
        def _use_instance(self, inst):  # noqa: ANN001, ANN202 - a sketch
            self.instance = inst

    assert "_restart" in Partial.__abstractmethods__ and "_use_instance" not in Partial.__abstractmethods__
    with pytest.raises(TypeError, match="abstract"):
        Partial([])


@pytest.mark.parametrize("env_id", realm_ids())
def test_every_realm_env_declares_its_deferred_scoring(env_id):
    env = gym.make(env_id)
    assert isinstance(env.unwrapped, DefersScoring)
    assert isinstance(env.unwrapped.yardstick, Yardstick)
    env.close()


def test_lookup_answers_pending_then_the_finish_solves(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    env = gym.make("Realm-P1-v0", instance=generate_instance("P1", size="small", seed=4242))
    base = env.unwrapped
    env.reset(seed=0)
    assert base.yardstick.lookup(solve=False) == Pending()  # nobody shipped it: it waits
    assert base.reference.value is None and base.reference.status == "PENDING"  # the provisional yardstick
    info = _play_random(env)
    assert info["metrics"]["optimality_pending"]
    finished = base.finish_metrics()
    found = base.yardstick.lookup(solve=False)
    assert isinstance(found, Reference) and found.value is not None and found.source == "solved"
    assert not finished["optimality_pending"] and finished["optimality"] is not None


def test_a_shipped_reference_is_found_without_a_solve():
    env = gym.make("Realm-P1-v0")
    env.reset(seed=0)
    found = env.unwrapped.yardstick.lookup(solve=False)
    assert isinstance(found, Reference) and found.source == "shipped" and found.value > 0


def test_a_given_reference_is_used_as_given():
    env = gym.make("Realm-P1-v0", reference=123.0)
    env.reset(seed=0)
    assert env.unwrapped.yardstick.lookup(solve=False) == Reference.given(123.0)


def test_finish_adaptation_is_deprecated_for_finish_metrics():
    env = gym.make("Realm-P1-v0")
    env.reset(seed=0)
    _play_random(env)
    with pytest.warns(DeprecationWarning, match="finish_metrics"):
        env.unwrapped.finish_adaptation()
