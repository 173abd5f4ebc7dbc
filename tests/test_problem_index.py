"""The problem index is the one list of problems: every consumer reads it, every part it names
exists, and reading it stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import crab_gym
from crab_gym.baselines.registry import policy_specs
from crab_gym.datasets import list_instances, load_instance, problems
from crab_gym.datasets.upstream import convert_upstream
from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.problem_spec import ROLES
from crab_gym.envs.realm.common.upstream import detect_problem
from crab_gym.envs.realm.common.viewer import Viewer
from crab_gym.envs.realm.index import FAMILIES, problem_spec, problem_specs
from crab_gym.envs.registration import env_specs, multiagent_ids, realm_ids

ROOT = Path(__file__).resolve().parents[1]
SPECS = problem_specs()


def test_every_family_folder_is_in_the_index_once():
    folders = sorted(p.name for p in (ROOT / "crab_gym/envs/realm").iterdir()
                     if p.is_dir() and (p / "__init__.py").is_file() and p.name != "common")
    assert sorted(m.split(".")[-2] for m in FAMILIES) == folders
    assert {f"P{k}" for k in range(1, 12)} <= {s.problem for s in SPECS}  # REALM-Bench's eleven
    assert [s.problem for s in SPECS] == sorted((s.problem for s in SPECS), key=lambda p: (p[0] != "P", int(p[1:])))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_every_part_a_spec_names_exists(spec):
    for role in ROLES:
        if role == "check":
            continue  # checked with values in tests/test_problem_checks.py
        part = spec.part(role)
        if getattr(spec, role) is None:
            assert part is None
            continue
        if role == "viewer":  # the env's default viewer (tests/common/test_viewer.py shows it)
            assert isinstance(part, Viewer) and spec.part("env").viewer is part
            continue
        assert callable(part), f"{spec.problem} {role}: {spec.entry_point(role)}"
    assert issubclass(spec.part("env"), gym.Env)
    assert (ROOT / spec.docs).is_file() and (ROOT / spec.tests).is_dir()
    names = spec.part("names")()
    assert names and spec.part("load")(names[0]) is not None


def test_registration_and_facades_read_the_index():
    assert realm_ids() == [s.env_id for s in SPECS]
    assert [e.id for e in env_specs()][: len(SPECS)] == realm_ids()
    assert multiagent_ids() == [s.env_id for s in SPECS if s.multiagent]
    assert problems() == [s.problem for s in SPECS]
    for spec in SPECS:
        registered = gym.spec(spec.env_id)
        assert registered.entry_point == spec.entry_point("env")
        assert registered.vector_entry_point == spec.entry_point("vector_env")
        assert list_instances(spec.problem) == spec.part("names")()
    assert load_instance("p3", "p3_small_01").name == "p3_small_01"  # keys are case-blind


def test_the_policy_registry_offers_each_problems_heuristics():
    registry = policy_specs()
    for spec in SPECS:
        greedy = spec.greedy()
        assert greedy is not None, spec.problem
        assert registry[greedy.name].greedy and registry[greedy.name].fits(spec.env_id)
        assert [n for n, p in registry.items() if p.greedy and p.fits(spec.env_id)] == [greedy.name]
    assert registry["ridesharing_greedy"].env_ids == ("Realm-P3-v0", "Realm-P4-v0")
    assert registry["mwkr"].build(gym.make("Realm-P11-v0")).name == "MWKR"


def test_upstream_detection_comes_from_each_problems_keys():
    for spec in SPECS:
        if spec.upstream is None:
            continue
        assert detect_problem(dict.fromkeys(spec.upstream_keys, [])) == spec.problem
    with pytest.raises(InstanceFormatError, match="expected the keys of one of P1: distances, time_windows; P2"):
        convert_upstream({"something": 1}, "x.json")


def test_problem_spec_lookup_by_name_or_id():
    assert problem_spec("Realm-P7-v0") is problem_spec("p7")
    with pytest.raises(KeyError, match="unknown REALM problem 'P99'; choose one of P1, P2"):
        problem_spec("P99")


def test_reading_the_index_loads_no_family_module_and_no_solver():
    code = (
        "import sys, crab_gym\n"
        "from crab_gym.envs.realm.index import problem_specs\n"
        "problem_specs()\n"
        "heavy = [m for m in sys.modules if m.startswith('ortools') or m.endswith(('.env', '.oracle'))\n"
        "         and m.startswith('crab_gym.envs.realm')]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert crab_gym is not None
