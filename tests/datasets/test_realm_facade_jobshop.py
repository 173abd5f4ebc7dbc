"""``load_realm_instance`` on job-shop files: a J2 file finds the J1 file it names beside it
(as ``gym.make`` does, without ``CRAB_GYM_REALM_DIR``), a J1 text loads as P11, a text that is
not one says what it was read as, and the refusal names every problem there is. Files are
written here in the upstream shapes with our own numbers (no upstream file is shipped).

Opt-in: with ``CRAB_GYM_REALM_DIR`` set to a user's upstream ``datasets`` folder, every J1,
J2, J3 and J4 file loads through the facade with the variable unset while loading."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.datasets import InstanceFormatError, RealmRepairWarning, load_instance, load_realm_instance

#: 11 jobs x 3 machines in the standard form: 12 lines, more than the 10 upstream keeps.
J1_STANDARD = "11 3\n" + "".join(f"{j % 3} {j + 2} {(j + 1) % 3} {3 * j + 1} {(j + 2) % 3} {7 - j % 5}\n"
                                 for j in range(11))
#: 2 jobs x 3 machines in Taillard's long form (machines from 1).
J1_TAILLARD = ("Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound\n"
               "  2  3  5  6  20  15\nTimes\n 6 2 7\n 3 8 1\nMachines\n 3 1 2\n 2 3 1\n")
REALM_DIR = os.environ.get("CRAB_GYM_REALM_DIR")


def tree(tmp_path: Path, j1_text: str = J1_STANDARD, source_file: str = "J1/own/shop.txt") -> Path:
    """datasets/J1/own/shop.txt and datasets/J2/disruptions/shop_disrupted.json as upstream lays
    them out (the J2 file keeps the J1 text's first 10 lines only); returns the J2 file."""
    j1 = tmp_path / "datasets" / "J1" / "own" / "shop.txt"
    j1.parent.mkdir(parents=True)
    j1.write_text(j1_text)
    j2 = tmp_path / "datasets" / "J2" / "disruptions" / "shop_disrupted.json"
    j2.parent.mkdir(parents=True)
    j2.write_text(json.dumps({
        "instance_id": "shop_disrupted",
        "base_instance": {"source_file": source_file, "jobs": [], "machines": [], "processing_times": [],
                          "raw_content": "".join(J1_STANDARD.splitlines(keepends=True)[:10])},
        "disruptions": [{"type": "machine_breakdown", "machine_id": 3, "start_time": 6, "duration": 9,
                         "impact": "own words"}],
        "objective": "minimize_makespan_with_adaptation"}))
    return j2


def quietly(load, *args):
    """``load(*args)`` and the repairs it reported."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = load(*args)
    return out, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


def test_a_j2_file_finds_the_j1_file_it_names_above_it_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("CRAB_GYM_REALM_DIR", raising=False)
    path = tree(tmp_path)
    inst, repairs = quietly(load_realm_instance, path)
    assert (inst.problem, inst.n_jobs, inst.n_machines) == ("J2", 11, 3)
    assert inst.jobs[10] == ((1, 12), (2, 31), (0, 7))  # the 11th job: on line 12, past the cut text
    assert inst.disruptions[0].get("machine") == 2  # machine_id 3, numbered from 1
    assert any("holds only the first 10 lines of J1/own/shop.txt" in r for r in repairs)
    assert all(r.startswith(str(path)) for r in repairs)  # each repair names the file
    assert inst == quietly(load_instance, "J2", str(path))[0]
    env, _ = quietly(lambda: gym.make("Realm-J2-v0", instance=str(path), reference="bound"))
    env.reset(seed=0)
    assert env.unwrapped.instance.jobs == inst.jobs
    env.close()


def test_a_j2_file_whose_j1_file_is_missing_names_the_file_and_the_field(tmp_path, monkeypatch):
    monkeypatch.delenv("CRAB_GYM_REALM_DIR", raising=False)
    path = tree(tmp_path, source_file="J1/own/gone.txt")
    with pytest.raises(InstanceFormatError) as err:
        quietly(load_realm_instance, path)
    assert err.value.field == "base_instance.raw_content" and "shop_disrupted.json" in err.value.source
    assert "'J1/own/gone.txt' was not found above the file" in str(err.value)


def test_a_j1_text_loads_as_p11_in_either_form(tmp_path):
    standard, taillard = tmp_path / "own.txt", tmp_path / "TA_own.txt"
    standard.write_text(J1_STANDARD)
    taillard.write_text(J1_TAILLARD)
    inst = load_realm_instance(standard)
    assert type(inst).__name__ == "JSSPInstance" and (inst.n_jobs, inst.n_machines) == (11, 3)
    assert inst.machines[1] == (1, 2, 0) and inst.durations[1] == (3, 4, 6)
    assert inst == load_instance("P11", str(standard))
    ta = load_realm_instance(taillard)
    assert ta.machines == ((2, 0, 1), (1, 2, 0)) and ta.durations == ((6, 2, 7), (3, 8, 1))
    env = gym.make("Realm-P11-v0", instance=str(standard), reference="bound")
    assert env.reset(seed=0)[0] is not None
    env.close()


@pytest.mark.parametrize(("text", "line", "words"), [
    ("hello world\n", 1, "token 1 is 'hello'"),
    ("3 2\n0 4 1 5\n", 2, "announces 3 jobs"),
])
def test_a_text_that_is_not_a_j1_text_says_what_it_was_read_as(tmp_path, text, line, words):
    path = tmp_path / "notes.txt"
    path.write_text(text)
    with pytest.raises(InstanceFormatError) as err:
        load_realm_instance(path)
    message = str(err.value)
    assert err.value.source == "notes.txt" and err.value.line == line and words in message
    assert message.startswith(f"notes.txt, line {line}: not JSON, so read as a REALM-Bench J1 job-shop text (P11")


def test_a_json_file_with_a_j1_text_inside_is_still_invalid_json(tmp_path):
    path = tmp_path / "shop.json"
    path.write_text(J1_STANDARD)
    with pytest.raises(InstanceFormatError, match=r"shop.json, line 1: invalid JSON"):
        load_realm_instance(path)


def test_the_refusal_names_every_problem_read_and_where_j1_files_go(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"widgets": [1, 2]}))
    with pytest.raises(InstanceFormatError) as err:
        load_realm_instance(path)
    message = str(err.value)
    assert message.startswith("other.json: not a REALM-Bench P1-P10 file, nor a J2, J3 or J4 one "
                              "(a J1 file, which is P11, is a text): expected the keys of one of P1: ")
    assert "J2: base_instance, disruptions; J3: processing_times; J4: processing_times, disruptions" in message
    assert message.endswith("(found: widgets)")


# ----------------------------------------------------------------------------- opt-in: a user's copy
@pytest.mark.skipif(not REALM_DIR, reason="set CRAB_GYM_REALM_DIR to an upstream REALM-Bench datasets folder")
@pytest.mark.parametrize(("folder", "pattern", "count", "kind"), [
    ("J1", "*.txt", 109, "P11"), ("J2/disruptions", "*.json", 109, "J2"),
    ("J3/custom", "*.json", 100, "J3"), ("J4/custom", "*.json", 100, "J4"),
])
def test_every_upstream_job_shop_file_loads_through_the_facade(folder, pattern, count, kind, monkeypatch):
    root = Path(REALM_DIR or ".")
    monkeypatch.delenv("CRAB_GYM_REALM_DIR")  # J2 files find their J1 file above them
    paths = sorted((root / folder).rglob(pattern))
    assert len(paths) == count
    for path in paths:
        inst, _ = quietly(load_realm_instance, path)
        assert getattr(inst, "problem", "P11") == kind, path
        assert inst.n_jobs >= 1 and inst.n_machines >= 1
