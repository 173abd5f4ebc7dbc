"""The contract check tells declared per-step scratch apart from state (issue 28, item 5): an
invalid action may change what an env declares in ``transient_attributes`` (reported as a note),
never anything else (a failure naming the attribute)."""

from __future__ import annotations

from crab_gym.envs.realm.common.env import RealmEnv
from crab_gym.envs.realm.jobshop.env import JobShopEnv
from crab_gym.envs.testing import check_contract


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
