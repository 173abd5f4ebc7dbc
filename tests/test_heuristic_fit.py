"""Issue 28, item 4: a family's heuristic given another problem's env (or observation) raises
one PolicyFitError (a TypeError) naming what it acts on and what it got, when it is built
(class policies) or at its first call (function heuristics, rules); it used to fail in its
first step with a KeyError or AttributeError about a part of the wrong env."""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401  (registers the env ids)
from crab_gym.baselines.registry import PolicyMismatchError, policy_specs
from crab_gym.envs.realm.campus_tour.heuristics import InsertionTourPolicy
from crab_gym.envs.realm.common.policy_fit import EnvFit, PolicyFitError, env_label
from crab_gym.envs.realm.disaster_relief.heuristics import GreedyReliefPolicy
from crab_gym.envs.realm.group_tours.heuristics import EarliestStartPolicy
from crab_gym.envs.realm.jobshop.heuristics import RULES
from crab_gym.envs.realm.ridesharing import heuristics as ridesharing
from crab_gym.envs.realm.supply_chain import heuristics as supply_chain
from crab_gym.envs.realm.thanksgiving import heuristics as thanksgiving
from crab_gym.envs.realm.wedding import heuristics as wedding


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def p1():
    env = gym.make("Realm-P1-v0")
    env.reset(seed=0)
    return env


@pytest.fixture(scope="module")
def p3():
    env = gym.make("Realm-P3-v0")
    env.reset(seed=0)
    return env


def _raises(call: Any) -> str:
    with pytest.raises(PolicyFitError) as err:
        call()
    assert isinstance(err.value, TypeError)
    return str(err.value)


def test_spt_on_a_p1_observation_names_the_keys_it_reads(p1):
    obs, info = p1.reset(seed=0)
    text = _raises(lambda: RULES["SPT"](obs, info))  # was KeyError: 'done'
    assert text == (
        "dispatching rule SPT acts on Realm-P11-v0 (JobShopEnv) observations (keys action_mask, done, "
        "lower_bound, processing_time); got an observation with keys action_mask, clock, location, travel, "
        "travel_left, visited, walked, windows"
    )


def test_a_rule_on_a_flat_observation_and_reset_on_another_env(p3):
    import numpy as np

    text = _raises(lambda: RULES["MWKR"].select(np.zeros(4)))
    assert text.endswith("got a ndarray observation")
    text = _raises(lambda: RULES["FIFO"].reset(p3))
    assert text == "dispatching rule FIFO acts on Realm-P11-v0 (JobShopEnv); got RideSharingEnv (Realm-P3-v0)"


def test_p7_greedy_on_p3_is_refused_when_built(p3):
    text = _raises(lambda: GreedyReliefPolicy(p3))  # was AttributeError at the first call
    assert text == "GreedyReliefPolicy acts on Realm-P7-v0 (DisasterReliefEnv); got RideSharingEnv (Realm-P3-v0)"


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (InsertionTourPolicy, "InsertionTourPolicy acts on Realm-P1-v0 (CampusTourEnv)"),
        (EarliestStartPolicy, "EarliestStartPolicy acts on Realm-P2-v0 (GroupToursEnv)"),
        (GreedyReliefPolicy, "GreedyReliefPolicy acts on Realm-P7-v0 (DisasterReliefEnv)"),
    ],
)
def test_class_policies_check_when_built_and_at_reset(p3, p1, make, expected):
    assert _raises(lambda: make(p3)) == f"{expected}; got RideSharingEnv (Realm-P3-v0)"
    if make is not InsertionTourPolicy:
        assert _raises(lambda: make(p1)) == f"{expected}; got CampusTourEnv (Realm-P1-v0)"


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        (ridesharing, "ridesharing.heuristics.greedy_action acts on Realm-P3-v0 or Realm-P4-v0 (RideSharingEnv)"),
        (wedding, "wedding.heuristics.greedy_action acts on Realm-P5-v0 or Realm-P8-v0 (WeddingEnv)"),
        (thanksgiving, "thanksgiving.heuristics.greedy_action acts on Realm-P6-v0 or Realm-P9-v0 (ThanksgivingEnv)"),
        (supply_chain, "supply_chain.heuristics.greedy_action acts on Realm-P10-v0 (SupplyChainEnv)"),
    ],
)
def test_function_heuristics_check_at_the_call(p1, module, expected):
    assert _raises(lambda: module.greedy_action(p1)) == f"{expected}; got CampusTourEnv (Realm-P1-v0)"


def test_the_variants_fit_and_the_wrapped_env_is_unwrapped():
    """P4/P8/P9 envs subclass their family's env: the greedy policies accept them, wrapped."""
    for env_id, module in (("Realm-P4-v0", ridesharing), ("Realm-P8-v0", wedding), ("Realm-P9-v0", thanksgiving)):
        env = gym.make(env_id)
        env.reset(seed=0)
        assert module.FIT.check(env) is env.unwrapped
        assert isinstance(module.greedy_action(env), dict)
        env.close()


def test_every_fit_names_a_class_that_exists():
    """The fits name their env by its qualified class name: a moved class must fail here."""
    fits = [m.FIT for m in (ridesharing, wedding, thanksgiving, supply_chain)]
    fits += [importlib.import_module(f"crab_gym.envs.realm.{f}.heuristics").FIT
             for f in ("campus_tour", "group_tours", "disaster_relief")]
    fits += [RULES["SPT"].fit]
    for fit in fits:
        module, name = fit.env_class.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        assert f"({name})" in fit.acts_on and isinstance(cls, type)


def test_env_fit_labels_and_remembers_a_fitting_class():
    class Thing:
        pass

    fit = EnvFit("demo", f"{__name__}.Thing", ("Demo-v0",))
    with pytest.raises(PolicyFitError, match=r"^demo acts on Demo-v0 \(Thing\); got NoneType$"):
        fit.check(None)
    thing = Thing()
    fit.env_class = f"{Thing.__module__}.{Thing.__qualname__}"
    assert fit.check(thing) is thing and Thing in fit._fitting
    assert env_label(thing) == "test_env_fit_labels_and_remembers_a_fitting_class.<locals>.Thing"


def test_the_registry_and_a_direct_heuristic_raise_one_error_type():
    with pytest.raises(PolicyFitError) as caught:  # the registry's check
        policy_specs()["spt"].build(gym.make("Realm-P1-v0"))
    assert isinstance(caught.value, PolicyMismatchError) and isinstance(caught.value, ValueError)
    with pytest.raises(PolicyFitError):  # the heuristic's own check, built directly
        GreedyReliefPolicy(gym.make("Realm-P3-v0"))
