"""The paths issue 37 moved keep working for one release: importing one warns and names the new
path, and every name resolves to the very object of the new module (a class stays the same
class, so ``isinstance`` and ``except`` keep working across old and new imports)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from types import ModuleType

import pytest

from crab_gym.checks import check_adversarial, check_honest_roles, check_scoring
from crab_gym.checks.cli import main, scoring_main
from tests.moved_paths import SHIMS


def _fresh_import(old: str) -> ModuleType:
    """Import ``old`` as a first import would (the warning fires once, on import)."""
    sys.modules.pop(old, None)
    parent, _, child = old.rpartition(".")
    if hasattr(sys.modules.get(parent), child):
        delattr(sys.modules[parent], child)
    return importlib.import_module(old)


@pytest.mark.parametrize("old", sorted(SHIMS))
def test_an_old_path_warns_and_gives_the_same_objects(old):
    if old == "crab_gym.multiagent.testing":
        pytest.importorskip("pettingzoo")
    new = importlib.import_module(SHIMS[old])
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {SHIMS[old]}"):
        shim = _fresh_import(old)
    public = [name for name in vars(new) if not name.startswith("_")]
    private = [name for name in vars(new) if name.startswith("_") and not name.startswith("__")]
    assert public
    assert [name for name in public + private if getattr(shim, name) is not getattr(new, name)] == []


def test_the_old_testing_module_keeps_what_moved_beside_the_contract():
    """``crab_gym.envs.testing`` also held the combined scoring check and the command."""
    with pytest.warns(DeprecationWarning, match="crab_gym.checks.contract"):
        shim = _fresh_import("crab_gym.envs.testing")
    assert shim.check_scoring is check_scoring
    assert shim.check_honest_roles is check_honest_roles
    assert shim.check_adversarial is check_adversarial
    assert (shim.main, shim.scoring_main) == (main, scoring_main)


def test_a_class_from_an_old_path_is_the_class_the_runner_raises():
    with pytest.warns(DeprecationWarning):
        old = _fresh_import("crab_gym.core.outcome")
    from_new = importlib.import_module("crab_gym.evaluation.outcome")
    assert old.InfrastructureError is from_new.InfrastructureError
    with pytest.raises(old.InfrastructureError):
        raise from_new.InfrastructureError("the endpoint went away")


@pytest.mark.parametrize("command", ["crab_gym.envs.testing", "crab_gym.checks"])
def test_the_check_command_runs_under_its_old_and_new_name(command):
    done = subprocess.run([sys.executable, "-m", command, "--help"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m crab_gym.checks")
    assert "--scoring" in done.stdout
    assert ("is now python -m crab_gym.checks" in done.stderr) == (command == "crab_gym.envs.testing")
