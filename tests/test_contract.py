"""The shipped contract test (crab_gym.checks.contract) on every registered env, and on envs
that break the contract on purpose (so that we know the check can fail)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.checks.contract import check_contract, registered_env_ids, state_snapshot
from crab_gym.envs.registration import env_specs
from tests.core.toy_env import LampsEnv

REALM_IDS = [i for i in registered_env_ids() if i.startswith("Realm-")]


def test_the_registry_drives_the_list():
    assert registered_env_ids() == sorted(spec.id for spec in env_specs())
    assert len(REALM_IDS) >= 5


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_every_realm_env_keeps_the_contract(env_id):
    report = check_contract(env_id, steps=2000, seed=1)
    report.raise_if_failed()
    assert report.exceptions == 0
    assert report.steps == 2000
    assert report.legal_steps > 500
    assert report.invalid_tried > 500
    assert report.out_of_space_tried > 200
    assert report.episodes > 5


# ------------------------------------------------------------------ the check can fail
class _MutatesOnInvalid(LampsEnv):
    """Counts refused actions in its state: the contract says an invalid step changes nothing."""

    def _check_action(self, name, args):
        reason = super()._check_action(name, args)
        if reason:
            self.order.append(99)
        return reason


class _CoercesIndices(LampsEnv):
    """Runs a negative lamp index as the last lamp (as codecs that call int() once did)."""

    def step(self, action):
        if isinstance(action, tuple) and isinstance(action[1], dict) and isinstance(action[1].get("lamp"), int):
            lamp = action[1]["lamp"] % 4
            if not self.lit[lamp]:
                self.lit[lamp] = True
                self.order.append(lamp)
            return self._get_obs(), 0.0, False, False, self._info(None, True, "", [], {}, {})
        return super().step(action)


class _Raises(LampsEnv):
    def _is_terminated(self):
        if len(self.order) >= 2:
            raise RuntimeError("boom")
        return super()._is_terminated()


class _WallClockInfo(LampsEnv):
    def _extra_info(self):
        import time

        return {"t": time.perf_counter()}


@pytest.mark.parametrize(
    ("env_cls", "fragment"),
    [
        (_MutatesOnInvalid, "changed the env state"),
        (_CoercesIndices, "ran instead of being refused"),
        (_Raises, "raised RuntimeError: boom"),
    ],
)
def test_the_check_finds_a_broken_env(env_cls, fragment):
    report = check_contract(env_cls(), steps=300, determinism_steps=0)
    assert not report.ok
    assert any(fragment in f for f in report.failures), report.failures
    with pytest.raises(AssertionError, match="LampsEnv|_"):
        report.raise_if_failed()


def test_the_check_finds_nondeterministic_infos():
    gym.register("Test-WallClock-v0", entry_point=_WallClockInfo)
    try:
        report = check_contract("Test-WallClock-v0", steps=50, determinism_steps=50)
    finally:
        gym.registry.pop("Test-WallClock-v0")
    assert any("two seeded runs differ" in f for f in report.failures)


def test_a_correct_toy_env_passes():
    report = check_contract(LampsEnv(), steps=500, determinism_steps=0)
    report.raise_if_failed()
    assert report.invalid_tried > 100


def test_state_snapshot_sees_nested_changes():
    env = LampsEnv()
    env.reset(seed=0)
    before = state_snapshot(env)
    env.lit[np.flatnonzero(~env.lit)[0]] = True
    assert state_snapshot(env) != before


def test_a_state_change_of_shape_is_named_not_a_crash():
    """A snapshot part that turns from a labelled pair into something else is still reported
    by its path (it raised IndexError inside the report before)."""
    from crab_gym.checks.contract import _first_difference

    assert _first_difference((("a", (1, 2)), 3), ((1,), 3)) == "[0]"
    assert _first_difference((("map", (("x", 1),)),), (("map", (("x", 2),)),)) == "[0].x"


def test_the_contract_command_says_how_far_it_is(capsys):
    """Issue 38: ``python -m crab_gym.envs.testing --steps 5000`` ran ~15 min saying nothing of time."""
    from crab_gym.checks.cli import main, progress_line

    assert progress_line(3, 15, "Realm-P3-v0", 125.0) == "[3/15] Realm-P3-v0 checked; 2 min 05 s so far, about 8 min 20 s left"
    assert progress_line(2, 2, "Realm-P1-v0", 9.4) == "[2/2] Realm-P1-v0 checked; 9 s so far"
    assert main(["Realm-P1-v0", "Realm-P11-v0", "--steps", "40"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[1/2] Realm-P1-v0 checked; ") and err[0].endswith(" left")
    assert err[1].startswith("[2/2] Realm-P11-v0 checked; ") and "left" not in err[1]
