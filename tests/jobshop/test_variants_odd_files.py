"""Issue 38, item 6: J2/J3/J4 files that were accepted with observations outside the
observation space, or with a changed meaning, or refused with a vague message. Each is now
refused naming the file and the field (or, for a J4 file given to J3, repaired with a warning).
The files are written here in the upstream shapes of test_variants_upstream."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.datasets import load_instance
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.jobshop.variants.model import MAX_TIME
from tests.jobshop.test_variants_upstream import j2_file, j3_file, write

BREAKDOWN = {"type": "machine_breakdown", "machine_id": 2, "start_time": 1, "duration": 4}
WEATHER = {"type": "weather_effect", "affected_operations": [2], "severity": 0.5, "start_time": 1, "duration": 4}
SUPPLY = {"type": "supply_delay", "affected_jobs": [1], "shortage_percentage": 40, "start_time": 1, "duration": 4}


def j4_file(*disruptions: dict) -> dict:
    return {**j3_file(), "instance_id": "j4_custom_001", "base_instance": "j4_custom_base_001",
            "disruptions": list(disruptions)}


def with_op(data: dict, **values) -> dict:
    """``data`` with job 0's first operation changed."""
    data["processing_times"][0][0].update(values)
    return data


def refused(tmp_path, problem: str, data: dict) -> InstanceFormatError:
    """The error of loading ``data`` as a file of ``problem`` (by the loader and by gym.make)."""
    path = write(tmp_path, "odd.json", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        with pytest.raises(InstanceFormatError) as err:
            load_instance(problem, str(path))
        with pytest.raises(InstanceFormatError):
            gym.make(f"Realm-{problem}-v0", instance=str(path), reference="bound")
    assert "odd.json" in str(err.value)
    return err.value


# ----------------------------------------------------------------------------- beyond the observation's bound
@pytest.mark.parametrize(("problem", "data", "field"), [
    ("J3", with_op(j3_file(), processing_time=20_000_000), "processing_times[0][0].processing_time"),
    ("J3", {"machines": 2, "jobs": [[[0, 10**9], [1, 3]]]}, "jobs[0][0][1]"),
    ("J2", j2_file({**BREAKDOWN, "duration": 10**9}), "disruptions[0].duration"),
    ("J2", j2_file({**BREAKDOWN, "start_time": 10**9}), "disruptions[0].start_time"),
    ("J4", j4_file({**BREAKDOWN, "duration": 10**9}), "disruptions[0].duration"),
])
def test_a_time_beyond_the_observation_bound_is_refused(tmp_path, problem, data, field):
    """Before: accepted, and the episode's observations left observation_space (a duration
    of 2e7 in processing_time; a breakdown of 1e9 in machine_available and machine_down)."""
    assert refused(tmp_path, problem, data).field == field


def test_durations_that_add_up_beyond_the_bound_are_refused(tmp_path):
    """Each duration fits, their sum does not: a schedule may run one after the other."""
    data = with_op(j3_file(), processing_time=MAX_TIME // 2)
    data["processing_times"][1][0]["processing_time"] = MAX_TIME // 2
    err = refused(tmp_path, "J3", data)
    assert err.field == "processing_times" and "add up to 16,000,016" in str(err)


def test_a_disruption_ending_after_the_bound_less_the_work_is_refused(tmp_path):
    work = 5 + 3 + 4 + 2 + 6 + 3  # the J3 file's durations
    late = {**BREAKDOWN, "start_time": MAX_TIME - work - 4, "duration": 5}
    err = refused(tmp_path, "J4", j4_file(late))
    assert err.field == "disruptions[0].duration" and f"must end by {MAX_TIME - work:,}" in str(err)


def test_at_the_bound_every_observation_stays_in_the_space_and_one_more_is_refused(tmp_path):
    """The bound is the latest time a schedule reaches: the durations plus the latest
    disruption end. At exactly that, a whole episode stays in observation_space; one unit
    more is refused."""
    work = MAX_TIME // 2 + 3 + 4 + 2 + 6 + 3
    data = j4_file({**BREAKDOWN, "machine_id": 2, "start_time": 0, "duration": MAX_TIME - work})
    data["processing_times"][0][0]["processing_time"] = MAX_TIME // 2
    path = write(tmp_path, "edge.json", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        env = gym.make("Realm-J4-v0", instance=str(path), reference="bound")
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    for _ in range(env.unwrapped.most_steps):
        obs, _, terminated, _, info = env.step((0, {"job": int(np.flatnonzero(obs["action_mask"])[0])}))
        assert env.observation_space.contains(obs), {k: v.max() for k, v in obs.items()}
        if terminated:
            break
    # job 0 waits for its machine, then runs its 8,000,007 units: all but jobs 1 and 2's 11
    assert terminated and info["metrics"]["makespan"] == MAX_TIME - 11
    data["disruptions"][0]["duration"] += 1
    assert refused(tmp_path, "J4", data).field == "disruptions[0].duration"


# ----------------------------------------------------------------------------- a changed meaning
@pytest.mark.parametrize(("problem", "data", "field"), [
    ("J3", with_op(j3_file(), machine=3.7), "processing_times[0][0].machine"),  # was machine 2
    ("J3", with_op(j3_file(), processing_time=0.4), "processing_times[0][0].processing_time"),  # was 0
    ("J3", with_op(j3_file(), operation=2), "processing_times[0]"),  # operation 2 twice
    ("J2", j2_file({**BREAKDOWN, "start_time": 1.5}), "disruptions[0].start_time"),  # was 1
    ("J2", j2_file({**BREAKDOWN, "duration": 2.5}), "disruptions[0].duration"),  # was 2
    ("J4", j4_file({**WEATHER, "affected_operations": [-1]}), "disruptions[0].affected_operations[0]"),  # was 1
    ("J4", j4_file({**WEATHER, "affected_operations": ["-1"]}), "disruptions[0].affected_operations[0]"),
    ("J4", j4_file({**WEATHER, "affected_operations": [2.5]}), "disruptions[0].affected_operations[0]"),
    ("J4", j4_file({**WEATHER, "affected_operations": [[-1, 2]]}), "disruptions[0].affected_operations[0][0]"),
    ("J4", j4_file({**SUPPLY, "affected_jobs": [1.5]}), "disruptions[0].affected_jobs[0]"),  # was job 0
    ("J4", j4_file({**SUPPLY, "affected_jobs": ["-1"]}), "disruptions[0].affected_jobs[0]"),
    ("J4", j4_file({**SUPPLY, "shortage_percentage": 250}), "disruptions[0].shortage_percentage"),  # was 100
    ("J4", j4_file({**WEATHER, "severity": 700}), "disruptions[0].severity"),  # was 1.0
    ("J4", j4_file({**BREAKDOWN, "machine_id": [2, 3]}), "disruptions[0].machine_id"),  # was machine 1 alone
    ("J4", j3_file(), "disruptions"),  # was read as J3, without disruptions
    ("J4", j4_file({**WEATHER, "affected_operations": 0}), "disruptions[0].affected_operations[0]"),  # was none
])
def test_a_value_that_would_change_meaning_is_refused(tmp_path, problem, data, field):
    assert refused(tmp_path, problem, data).field == field


def test_values_written_as_whole_numbers_still_read_and_a_fraction_is_refused(tmp_path):
    data = j4_file({**BREAKDOWN, "machine_id": [3], "duration": 4.0}, {**WEATHER, "affected_operations": ["J1_O2", "3"]})
    data = with_op(data, machine="2", processing_time=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        inst = load_instance("J4", str(write(tmp_path, "fine.json", data)))
    assert inst.jobs[0][0] == (1, 5)
    assert inst.disruptions[0].get("machine") == 2 and inst.disruptions[0].duration == 4
    assert inst.disruptions[1].get("operations") == ((0, 1), (0, 2))
    assert refused(tmp_path, "J4", with_op(data, machine="2.5")).field == "processing_times[0][0].machine"


def test_a_j4_file_given_to_j3_drops_its_disruptions_with_a_warning(tmp_path):
    """Before: J3's env ran the file's disruptions without showing them."""
    path = write(tmp_path, "j4.json", j4_file(BREAKDOWN))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load_instance("J3", str(path))
    assert inst.problem == "J3" and inst.disruptions == ()
    notes = [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]
    assert any("j4.json: disruptions: J3 has none; the file's 1 disruption(s) are not used" in n for n in notes)
    own = load_instance("J4", str(path)).to_dict()  # crab_gym's own form of the J4 instance
    with pytest.warns(RealmRepairWarning, match="own.json: disruptions: J3 has none"):
        inst = load_instance("J3", str(write(tmp_path, "own.json", own)))
    assert inst.problem == "J3" and inst.disruptions == () and inst.jobs == load_instance("J4", str(path)).jobs


# ----------------------------------------------------------------------------- vague messages
@pytest.mark.parametrize(("problem", "data", "field", "words"), [
    ("J2", {k: v for k, v in j2_file(BREAKDOWN).items() if k != "base_instance"}, "base_instance", "J2 file has"),
    ("J3", {k: v for k, v in j3_file().items() if k != "processing_times"}, "processing_times", "J3 file has"),
    ("J4", {k: v for k, v in j4_file(BREAKDOWN).items() if k != "processing_times"}, "processing_times", "J4 file"),
    ("J2", j2_file({k: v for k, v in BREAKDOWN.items() if k != "type"}), "disruptions[0].type", "missing required"),
    ("J2", j2_file({k: v for k, v in BREAKDOWN.items() if k != "start_time"}), "disruptions[0].start_time",
     "missing required"),
    ("J2", j2_file({k: v for k, v in BREAKDOWN.items() if k != "duration"}), "disruptions[0].duration",
     "missing required"),
    ("J2", j2_file({k: v for k, v in BREAKDOWN.items() if k != "machine_id"}), "disruptions[0].machine_id",
     "missing required"),
    ("J2", j2_file({**BREAKDOWN, "machine_id": 9}), "disruptions[0].machine_id", "numbered from 1"),
])
def test_a_missing_or_wrong_key_is_named_as_the_file_spells_it(tmp_path, problem, data, field, words):
    """Before: 'field machines: missing required key' for a J2 file without base_instance,
    'unknown type None', 'expected a number >= 0, got None', and 'field disruptions[0].machine:
    machine 8' for a file's machine_id 9."""
    err = refused(tmp_path, problem, data)
    assert err.field == field and words in str(err)


@pytest.mark.parametrize(("problem", "data", "field"), [
    ("J2", j2_file({**BREAKDOWN, "type": []}), "disruptions[0].type"),  # was TypeError: unhashable type
    ("J3", {"machines": 2, "jobs": [[[0, 1]]], "disruptions": [{"type": {}, "start": 0, "duration": 1}]},
     "disruptions[0].type"),
    ("J3", {**j3_file(), "num_machines": 10**9}, "num_machines"),  # was MemoryError building the spaces
    ("J3", {"machines": 10**9, "jobs": [[[0, 1]]]}, "machines"),
])
def test_a_type_of_the_wrong_kind_or_a_machine_count_beyond_the_operations_is_named(tmp_path, problem, data, field):
    assert refused(tmp_path, problem, data).field == field
