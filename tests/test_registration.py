"""Every suite id is registered on import and resolvable via the ``crab_gym:`` prefix."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest

import crab_gym
from crab_gym._optional import MissingExtraError, require
from crab_gym.envs.registration import env_ids, env_specs


def test_import_registers_every_id_with_a_string_entry_point():
    assert {"Realm-P1-v0", "Realm-P2-v0", "Realm-P3-v0", "Realm-P4-v0", "Realm-P11-v0", "CrabDesktop-v0"} <= set(env_ids())
    for spec in env_specs():
        registered = gym.spec(spec.id)
        assert registered.entry_point == spec.entry_point
        assert isinstance(registered.entry_point, str)  # lazy: importing crab_gym imports no env
    assert gym.spec("CrabDesktop-v0").nondeterministic


def test_registration_is_idempotent():
    crab_gym.register_envs = crab_gym.envs.registration.register_envs
    crab_gym.register_envs()
    assert len([k for k in gym.registry if k == "Realm-P11-v0"]) == 1


def test_module_prefix_works_without_importing_crab_gym():
    code = (
        "import sys, gymnasium as gym\n"
        "assert 'crab_gym' not in sys.modules\n"
        "env = gym.make('crab_gym:Realm-P11-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, sorted(info)[:2])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("JobShopEnv")


def test_missing_extra_error_names_the_install_command():
    with pytest.raises(MissingExtraError, match=r'pip install "crab_gym\[viz\]"'):
        require("surely_not_a_module_xyz", "viz")
