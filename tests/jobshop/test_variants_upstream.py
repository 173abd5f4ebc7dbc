"""The upstream REALM-Bench readers of J2, J3 and J4, on small files written here in the
upstream shapes (no upstream file is shipped): what they read, the repairs they report, and
the errors that name the file and field."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.datasets import load_instance
from crab_gym.datasets.upstream import load_realm_instance
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning

J1_TEXT = "3 3\n0 5 1 4 2 3\n1 2 0 6 2 4\n2 3 1 3 0 2\n"
#: 12 jobs x 2 machines in the standard form: 13 lines, so its first 10 (what upstream keeps
#: in raw_content) are not the whole instance.
J1_LONG = "12 2\n" + "".join(f"{j % 2} {j + 1} {1 - j % 2} {2 * j + 3}\n" for j in range(12))
#: A 2 x 2 instance in Taillard's long form (machines from 1).
TAILLARD = ("Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound\n"
            "  2  2  11  22  9  7\nTimes\n 4 3\n 2 5\nMachines\n 2 1\n 1 2\n")


def j2_file(disruption: dict, raw: str = J1_TEXT, source_file: str = "J1/mine/tiny.txt") -> dict:
    """An upstream J2 file's shape (upstream keeps only the first 10 lines of the J1 text)."""
    return {"instance_id": "tiny_disrupted",
            "base_instance": {"source_file": source_file, "jobs": [], "machines": [], "processing_times": [],
                              "raw_content": "".join(raw.splitlines(keepends=True)[:10])},
            "disruptions": [{**disruption, "impact": "whatever"}],
            "description": "a small J2 file", "objective": "minimize_makespan_with_adaptation"}


def j3_file() -> dict:
    """An upstream J3 file's shape: ids from 1, job 0 revisits machine 2."""
    ops = [[(1, 2, 5), (2, 2, 3), (3, 1, 4)], [(1, 3, 2), (2, 1, 6)], [(1, 1, 3)]]
    return {"instance_id": "j3_custom_001", "num_jobs": 3, "num_machines": 3, "total_operations": 6,
            "processing_times": [[{"operation": o, "machine": m, "processing_time": p} for o, m, p in row] for row in ops],
            "description": "a small J3 file", "objective": "minimize_makespan", "environment": "static"}


def write(tmp_path, name: str, data: dict):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def read(path, problem: str | None = None) -> tuple[object, list[str]]:
    """The instance (by the upstream facade, or by ``problem``'s loader, which knows the file's
    folder) and the repairs reported."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load_instance(problem, str(path)) if problem else load_realm_instance(path)
    return inst, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


def test_a_j2_file_reads_its_j1_text_and_converts_one_based_machine_ids(tmp_path):
    path = write(tmp_path, "tiny_disrupted.json",
                 j2_file({"type": "machine_breakdown", "machine_id": 2, "start_time": 4, "duration": 10}))
    inst, repairs = read(path)
    assert inst.problem == "J2" and inst.n_jobs == 3 and inst.n_machines == 3
    assert inst.jobs[0] == ((0, 5), (1, 4), (2, 3))
    d = inst.disruptions[0]
    assert (d.kind, d.start, d.duration, d.get("machine")) == ("machine_breakdown", 4, 10, 1)
    assert any("base_instance.jobs, machines, processing_times: empty lists ignored" in r for r in repairs)
    assert any("machine ids numbered from 1" in r for r in repairs)
    env = gym.make("Realm-J2-v0", instance=str(path), reference="bound")
    env.reset(seed=0)
    assert env.unwrapped.instance.disruptions == inst.disruptions


def test_a_j2_text_in_taillards_form_reads_machines_from_one(tmp_path):
    inst, _ = read(write(tmp_path, "ta_disrupted.json", j2_file(
        {"type": "emergency_shutdown", "facility": "main_facility", "start_time": 1, "duration": 3}, raw=TAILLARD)))
    assert inst.jobs == (((1, 4), (0, 3)), ((0, 2), (1, 5)))


def j2_tree(tmp_path, source_file: str = "J1/mine/long.txt", j1_text: str = J1_LONG) -> Path:
    """datasets/J1/mine/long.txt and datasets/J2/disruptions/long_disrupted.json, as upstream
    lays them out; returns the J2 file."""
    (tmp_path / "datasets/J1/mine").mkdir(parents=True)
    (tmp_path / "datasets/J1/mine/long.txt").write_text(j1_text)
    (tmp_path / "datasets/J2/disruptions").mkdir(parents=True)
    data = j2_file({"type": "power_outage", "affected_machines": [2], "start_time": 5, "duration": 6},
                   raw=J1_LONG, source_file=source_file)
    return write(tmp_path / "datasets/J2/disruptions", "long_disrupted.json", data)


def test_a_j2_text_cut_after_ten_lines_is_read_from_the_j1_file_it_names(tmp_path):
    path = j2_tree(tmp_path)
    inst, repairs = read(path, "J2")
    assert inst.n_jobs == 12 and inst.jobs[11] == ((1, 12), (0, 25))
    assert inst.disruptions[0].get("machines") == (1,)
    cut = [r for r in repairs if "holds only the first 10 lines of J1/mine/long.txt" in r]
    assert len(cut) == 1 and "header announces 12 jobs" in cut[0] and str(path) in cut[0]
    assert load_instance("J2", str(path)).jobs == inst.jobs
    env = gym.make("Realm-J2-v0", instance=str(path), reference="bound")
    assert env.reset(seed=0)[0]["n_ops"].tolist() == [2] * 12


def test_the_j1_file_is_also_found_under_crab_gym_realm_dir(tmp_path, monkeypatch):
    path = j2_tree(tmp_path)
    data = json.loads(path.read_text())
    monkeypatch.delenv("CRAB_GYM_REALM_DIR", raising=False)
    with pytest.raises(InstanceFormatError, match=r"base_instance.raw_content.*not found.*CRAB_GYM_REALM_DIR"):
        read(write(tmp_path, "elsewhere.json", data), "J2")
    assert read(path)[0].n_jobs == 12  # the facade looks above the file, as the J2 loader does
    monkeypatch.setenv("CRAB_GYM_REALM_DIR", str(tmp_path / "datasets"))
    assert read(write(tmp_path, "elsewhere.json", data), "J2")[0].n_jobs == 12
    assert read(path)[0].n_jobs == 12


@pytest.mark.parametrize(("source_file", "j1_text", "field"), [
    ("J1/mine/long.txt", J1_LONG.replace("12 2", "12 3", 1), "base_instance.source_file"),  # not the text's file
    ("../J1/mine/long.txt", J1_LONG, "base_instance.source_file"),
    ("J1/mine/missing.txt", J1_LONG, "base_instance.raw_content"),
])
def test_a_cut_j2_text_without_its_j1_file_names_the_field(tmp_path, source_file, j1_text, field):
    path = j2_tree(tmp_path, source_file, j1_text)
    with pytest.raises(InstanceFormatError) as err:
        read(path, "J2")
    assert "long_disrupted.json" in str(err.value) and field in str(err.value)


@pytest.mark.parametrize(("disruption", "field", "value"), [
    ({"type": "power_outage", "affected_machines": [1, 3]}, "machines", (0, 2)),
    ({"type": "power_outage", "affected_machines": []}, "machines", (0, 1, 2)),
    ({"type": "emergency_shutdown", "facility": "main_facility"}, "facility", "main_facility"),
    ({"type": "supply_delay", "resource": "material_B", "shortage_percentage": 40}, "jobs", ()),
    ({"type": "supply_delay", "resource": "material_B", "shortage_percentage": 0.34}, "shortage_percentage", 34.0),
    ({"type": "weather_effect", "affected_operations": ["J1_O2", "J3_O1"], "severity": 60}, "operations", ((0, 1), (2, 0))),
    ({"type": "weather_effect", "affected_operations": [5, 2], "severity": "severe"}, "operations", ((0, 1), (1, 1))),
    ({"type": "weather_effect", "affected_operations": [7], "severity": "extreme"}, "severity", 0.75),
])
def test_every_j2_type_reads(tmp_path, disruption, field, value):
    inst, repairs = read(write(tmp_path, "t.json", j2_file({**disruption, "start_time": 3, "duration": 7})))
    assert inst.disruptions[0].get(field) == value
    if disruption.get("affected_machines") == []:
        assert any("stops every machine" in r for r in repairs)
    if disruption.get("severity") == 60:
        assert inst.disruptions[0].get("severity") == 0.6 and any("percentage" in r for r in repairs)
    if disruption.get("shortage_percentage") == 0.34:  # upstream writes a fraction: 34 % of 3 jobs holds 2
        assert any("read as a fraction" in r for r in repairs)
        assert inst.windows()[0].jobs == ((0, 3, 10), (1, 3, 10))
    if disruption.get("severity") == "severe":  # the 5th and 2nd operations counting job by job, on machines 0, 1
        assert any("n-th operation counting job by job" in r for r in repairs)
        assert inst.windows()[0].machines == ((0, 3, 7), (1, 3, 7))  # severe: half of 7 rounds to 4


def test_an_unknown_severity_word_names_the_field(tmp_path):
    path = write(tmp_path, "bad.json", j2_file({"type": "weather_effect", "affected_operations": [1],
                                                "severity": "apocalyptic", "start_time": 1, "duration": 5}))
    with pytest.raises(InstanceFormatError, match=r"bad.json.*disruptions\[0\].severity.*moderate"):
        read(path)


def test_a_j3_file_reads_recirculating_jobs_and_converts_machine_ids(tmp_path):
    path = write(tmp_path, "j3_custom_001.json", j3_file())
    inst, repairs = read(path)
    assert inst.problem == "J3" and inst.n_machines == 3 and inst.disruptions == ()
    assert inst.jobs[0] == ((1, 5), (1, 3), (0, 4))  # machine 2 twice, from 1-based ids
    assert any("machine ids numbered from 1" in r for r in repairs)
    assert load_instance("J3", str(path)).jobs == inst.jobs
    env = gym.make("Realm-J3-v0", instance=str(path), reference="bound")
    obs, _ = env.reset(seed=0)
    assert obs["n_ops"].tolist() == [3, 2, 1]


def test_a_j3_file_with_operations_out_of_order_is_sorted_with_a_warning(tmp_path):
    data = j3_file()
    data["processing_times"][0].reverse()
    inst, repairs = read(write(tmp_path, "j3.json", data))
    assert inst.jobs[0] == ((1, 5), (1, 3), (0, 4))
    assert any("out of order" in r for r in repairs)


def test_a_j4_file_reads_three_disruptions_with_affected_jobs_and_cascades(tmp_path):
    data = {**j3_file(), "instance_id": "j4_custom_001", "base_instance": "j4_custom_base_001", "num_disruptions": 3,
            "complexity": "high", "disruptions": [
                {"type": "cascading_failure", "primary_machine": 1, "cascading_machines": [2, 3], "start_time": 9,
                 "duration": 10, "impact": "x", "affected_jobs": [1]},
                {"type": "supply_delay", "resource": "material_D", "shortage_percentage": 0.5, "start_time": 2,
                 "duration": 5, "impact": "x", "affected_operations": [4, 6]},
                {"type": "machine_breakdown", "machine_id": 3, "start_time": 5, "duration": 4, "impact": "x",
                 "affected_jobs": [3, 2]},
            ]}
    path = write(tmp_path, "j4_custom_001.json", data)
    inst, repairs = read(path)
    assert inst.problem == "J4" and [d.kind for d in inst.disruptions] == ["supply_delay", "machine_breakdown", "cascading_failure"]
    assert inst.disruptions[0].get("jobs") == (1, 2)  # the jobs of operations 4 and 6 (counted job by job)
    assert inst.disruptions[2].get("primary_machine") == 0 and inst.disruptions[2].get("cascading_machines") == (1, 2)
    assert any("disruptions[0, 2].affected_jobs not used" in r for r in repairs)
    assert load_realm_instance(path).disruptions == inst.disruptions
    env = gym.make("Realm-J4-v0", instance=str(path), reference="bound")
    assert env.reset(seed=0)[0]["job_hold"].shape == (3, 2)


@pytest.mark.parametrize(("data", "field"), [
    ({"processing_times": [[{"operation": 1, "machine": 1}]]}, "processing_times[0][0].processing_time"),
    ({"processing_times": [[{"operation": 1, "machine": "a", "processing_time": 3}]]}, "processing_times[0][0].machine"),
    (j2_file({"type": "meteor", "start_time": 1, "duration": 2}), "disruptions[0].type"),
    ({**j3_file(), "total_operations": 7}, "total_operations"),
    ({**j3_file(), "num_machines": 2}, "num_machines"),
    (j2_file({"type": "machine_breakdown", "machine_id": 9, "start_time": 1, "duration": 2}), "disruptions[0].machine"),
    ({"base_instance": {"raw_content": "2 2\n0 1 1\n"}, "disruptions": []}, "base_instance.raw_content"),
])
def test_malformed_files_name_the_file_and_the_field(tmp_path, data, field):
    path = write(tmp_path, "bad.json", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        with pytest.raises(InstanceFormatError) as err:
            load_realm_instance(path)
    assert "bad.json" in str(err.value) and field in str(err.value)
