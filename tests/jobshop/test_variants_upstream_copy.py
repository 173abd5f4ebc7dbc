"""Every J2/J3/J4 file of a user's own copy of the upstream REALM-Bench datasets loads, with
the disruptions it declares, and the envs run on some of them. Opt-in: set
``CRAB_GYM_REALM_DIR`` to the upstream ``datasets`` folder (nothing upstream is shipped)."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.realm.common.errors import RealmRepairWarning
from crab_gym.envs.realm.index import problem_spec

REALM_DIR = os.environ.get("CRAB_GYM_REALM_DIR")
pytestmark = pytest.mark.skipif(not REALM_DIR, reason="set CRAB_GYM_REALM_DIR to an upstream REALM-Bench datasets folder")

#: problem, files, how many upstream ships, disruptions per file
FOLDERS = (("J2", "J2/disruptions", 109, 1), ("J3", "J3/custom", 100, 0), ("J4", "J4/custom", 100, 3))


def files(folder: str) -> list[Path]:
    return sorted(Path(REALM_DIR or ".", folder).glob("*.json"))


def load(problem: str, path: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = problem_spec(problem).part("load")(str(path))
    return inst, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


@pytest.mark.parametrize(("problem", "folder", "count", "per_file"), FOLDERS)
def test_every_upstream_file_loads_with_the_disruptions_it_declares(problem, folder, count, per_file):
    paths = files(folder)
    assert len(paths) == count
    for path in paths:
        inst, repairs = load(problem, path)
        raw = json.loads(path.read_text())
        assert inst.problem == problem and len(inst.disruptions) == per_file == len(raw.get("disruptions", []))
        assert sorted(d.kind for d in inst.disruptions) == sorted(d["type"] for d in raw.get("disruptions", []))
        assert sorted(d.start for d in inst.disruptions) == sorted(d["start_time"] for d in raw.get("disruptions", []))
        assert repairs and all(r.startswith(str(path)) for r in repairs)  # each names the file
        if problem != "J2":
            assert (inst.n_jobs, inst.n_machines) == (200, 50) == (raw["num_jobs"], raw["num_machines"])
            assert inst.n_ops == raw["total_operations"]
            assert any("machine ids numbered from 1" in r for r in repairs)
        else:  # the J1 text is cut after 10 lines: the whole J1 file it names is read
            assert any("holds only the first 10 lines" in r for r in repairs)
            j1 = problem_spec("P11").part("load")(str(Path(REALM_DIR or ".", raw["base_instance"]["source_file"])))
            assert inst.jobs == tuple(tuple(zip(m, d)) for m, d in zip(j1.machines, j1.durations))


def test_every_j1_file_a_j2_file_names_loads_as_p11():
    paths = sorted(Path(REALM_DIR or ".", "J1").rglob("*.txt"))
    assert len(paths) == 109
    names = {json.loads(p.read_text())["base_instance"]["source_file"] for p in files("J2/disruptions")}
    assert names == {p.relative_to(Path(REALM_DIR or ".")).as_posix() for p in paths}
    for path in paths:
        inst = problem_spec("P11").part("load")(str(path))
        assert inst.n_jobs * inst.n_machines == sum(len(r) for r in inst.durations)


def test_a_j2_file_reads_the_whole_j1_instance_and_one_based_machine_ids():
    path = Path(REALM_DIR or ".", "J2/disruptions/TA01_disrupted.json")
    inst, _ = load("J2", path)
    raw = json.loads(path.read_text())["disruptions"][0]
    assert (inst.n_jobs, inst.n_machines) == (15, 15)
    if raw["type"] == "machine_breakdown":
        assert inst.disruptions[0].get("machine") == raw["machine_id"] - 1


@pytest.mark.parametrize(("problem", "folder"), [(p, f) for p, f, _, _ in FOLDERS])
def test_the_envs_reset_and_run_on_upstream_files(problem, folder):
    for path in files(folder)[:2] + files(folder)[-1:]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RealmRepairWarning)
            env = gym.make(f"Realm-{problem}-v0", instance=str(path), reference="bound")
        obs, _ = env.reset(seed=0)
        inst = env.unwrapped.instance
        assert obs["n_ops"].tolist() == [len(row) for row in inst.jobs]
        rng, done, steps, info = np.random.default_rng(0), False, 0, {}
        while not done:
            job = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            _, _, term, trunc, info = env.step((0, {"job": job}))
            done, steps = term or trunc, steps + 1
        assert steps == inst.n_ops and info["makespan"] >= inst.trivial_lower_bound()
        if problem != "J3":
            assert len(info["solution"]["disruptions"]) == sum(d.start < info["makespan"] for d in inst.disruptions)
        env.close()
