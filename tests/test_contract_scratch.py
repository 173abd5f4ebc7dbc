"""The contract check tells declared per-step scratch apart from state (issue 28, item 5): an
invalid action may change what an env declares in ``transient_attributes`` (reported as a note),
never anything else (a failure naming the attribute)."""

from __future__ import annotations

import gymnasium as gym

from crab_gym.checks.contract import check_contract, state_snapshot
from crab_gym.envs.realm.common.env import RealmEnv
from crab_gym.envs.realm.jobshop.env import JobShopEnv


class UndeclaredScratchJobShop(JobShopEnv):
    """P11 as if its reward-shaping scratch (``_lb_before``) were not declared."""

    transient_attributes = (*RealmEnv.transient_attributes, "_last_op")


def test_declared_scratch_is_reported_apart_and_allowed():
    report = check_contract(JobShopEnv(instance="ft06"), steps=300, determinism_steps=0)
    assert report.ok, report.failures
    assert set(report.transient_changes) <= {"_last_op", "_lb_before", "_pending", "_last_event"}
    assert report.transient_changes.get("_lb_before", 0) > 0  # invalid actions do move it
    assert any("_lb_before" in note for note in report.notes())


def test_undeclared_scratch_is_a_state_change():
    report = check_contract(UndeclaredScratchJobShop(instance="ft06"), steps=300,
                            determinism_steps=0)
    assert not report.ok
    assert any("changed the env state" in f and "_lb_before" in f for f in report.failures), report.failures
    assert "_lb_before" not in report.transient_changes


def test_derived_caches_are_left_out_of_the_state_snapshot():
    """A prepared start state or a memoised matrix is not state: dropping it changes no snapshot,
    while a change to real state does."""
    env = gym.make("Realm-P4-v0").unwrapped
    env.reset(seed=0)
    assert {"_fresh", "_travel_memo", "_graph_of"} <= set(env.derived_attributes)
    before = state_snapshot(env)
    env._fresh, env._travel_memo = None, None
    assert state_snapshot(env) == before
    env.sim.vehicles[0].free += 1
    assert state_snapshot(env) != before
