"""The upstream REALM-Bench readers of J2, J3 and J4, on small files written here in the
upstream shapes (no upstream file is shipped): what they read, the repairs they report, and
the errors that name the file and field."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.datasets import load_instance
from crab_gym.datasets.upstream import load_realm_instance
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning

J1_TEXT = "3 3\n0 5 1 4 2 3\n1 2 0 6 2 4\n2 3 1 3 0 2\n"


def j2_file(disruption: dict) -> dict:
    return {"name": "tiny", "base_instance": {"raw_content": J1_TEXT, "jobs": [], "machines": [], "processing_times": []},
            "disruptions": [disruption]}


def j3_file() -> dict:
    ops = [[(1, 2, 5), (2, 2, 3), (3, 1, 4)], [(1, 3, 2), (2, 1, 6)], [(1, 1, 3)]]  # job 0 revisits machine 2
    return {"processing_times": [[{"operation": o, "machine": m, "processing_time": p} for o, m, p in row] for row in ops]}


def write(tmp_path, name: str, data: dict):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def read(path) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load_realm_instance(path)
    return inst, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


def test_a_j2_file_reads_its_j1_text_and_converts_one_based_machine_ids(tmp_path):
    path = write(tmp_path, "tiny_disrupted.json",
                 j2_file({"type": "machine_breakdown", "machine_id": 2, "start_time": 4, "duration": 10}))
    inst, repairs = read(path)
    assert inst.problem == "J2" and inst.n_jobs == 3 and inst.n_machines == 3
    assert inst.jobs[0] == ((0, 5), (1, 4), (2, 3))
    d = inst.disruptions[0]
    assert (d.kind, d.start, d.duration, d.get("machine")) == ("machine_breakdown", 4, 10, 1)
    assert any("base_instance.jobs is empty" in r for r in repairs)
    assert any("machine ids numbered from 1" in r for r in repairs)
    env = gym.make("Realm-J2-v0", instance=str(path), reference="bound")
    env.reset(seed=0)
    assert env.unwrapped.instance.disruptions == inst.disruptions


@pytest.mark.parametrize(("disruption", "field", "value"), [
    ({"type": "power_outage", "affected_machines": [1, 3]}, "machines", (0, 2)),
    ({"type": "power_outage", "affected_machines": []}, "machines", (0, 1, 2)),
    ({"type": "emergency_shutdown", "facility": "plant"}, "facility", "plant"),
    ({"type": "supply_delay", "resource": "steel", "shortage_percentage": 40}, "jobs", ()),
    ({"type": "weather_effect", "affected_operations": ["J1_O2", "J3_O1"], "severity": 60}, "operations", ((0, 1), (2, 0))),
])
def test_every_j2_type_reads(tmp_path, disruption, field, value):
    inst, repairs = read(write(tmp_path, "t.json", j2_file({**disruption, "start_time": 3, "duration": 7})))
    assert inst.disruptions[0].get(field) == value
    if disruption.get("affected_machines") == []:
        assert any("stops every machine" in r for r in repairs)
    if disruption.get("severity") == 60:
        assert inst.disruptions[0].get("severity") == 0.6 and any("percentage" in r for r in repairs)


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
    data = {**j3_file(), "disruptions": [
        {"type": "cascading_failure", "primary_machine": 1, "cascading_machines": [2, 3], "start_time": 9,
         "duration": 10, "affected_jobs": [1]},
        {"type": "supply_delay", "resource": "x", "shortage_percentage": 20, "affected_jobs": [2, 3],
         "start_time": 2, "duration": 5},
        {"type": "machine_breakdown", "machine_id": 3, "start_time": 5, "duration": 4, "affected_jobs": []},
    ]}
    inst, repairs = read(write(tmp_path, "j4_custom_001.json", data))
    assert inst.problem == "J4" and [d.kind for d in inst.disruptions] == ["supply_delay", "machine_breakdown", "cascading_failure"]
    assert inst.disruptions[0].get("jobs") == (1, 2)
    assert inst.disruptions[2].get("primary_machine") == 0 and inst.disruptions[2].get("cascading_machines") == (1, 2)
    assert any("affected_jobs" in r for r in repairs)
    env = gym.make("Realm-J4-v0", instance=str(path := tmp_path / "j4_custom_001.json"), reference="bound")
    assert env.reset(seed=0)[0]["job_hold"].shape == (3, 2) and path.is_file()


@pytest.mark.parametrize(("data", "field"), [
    ({"processing_times": [[{"operation": 1, "machine": 1}]]}, "processing_times[0][0].processing_time"),
    ({"processing_times": [[{"operation": 1, "machine": "a", "processing_time": 3}]]}, "processing_times[0][0].machine"),
    (j2_file({"type": "meteor", "start_time": 1, "duration": 2}), "disruptions[0].type"),
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
