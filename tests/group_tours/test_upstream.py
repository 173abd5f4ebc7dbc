"""Realm-P2-v0: your own upstream REALM-Bench files (hours to minutes, repairs, errors)."""

import copy
import json
import warnings

import gymnasium as gym
import pytest

from crab_gym.datasets import load_realm_instance
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.group_tours.formats import from_upstream_p2, load_p2
from crab_gym.evaluation.episode_runner import finished_metrics
from tests.realm_helpers import P2_ID, ensure_registered

ensure_registered()

P2_UPSTREAM = {
    "visitor_groups": [
        {"group_id": "group1", "size": 10, "preferred_time": 9.5, "arrival_time": 9},
        {"group_id": "group2", "size": 15, "preferred_time": 10, "arrival_time": 9.75},
        {"group_id": "group3", "size": 8, "preferred_time": 10, "arrival_time": 10},
    ],
    "tour_guides": [
        {"guide_id": "guide1", "availability": [9, 13], "max_group_size": 15},
        {"guide_id": "guide2", "availability": [10, 17], "max_group_size": 10},
    ],
    "tour_duration": 60,
    "max_group_size": 15,
}


def _no_repairs(func, data, source):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RealmRepairWarning)
        return func(data, source)


def test_p2_hours_become_minutes():
    inst = _no_repairs(from_upstream_p2, P2_UPSTREAM, "groups.json")
    g1, g2, _ = inst.groups
    assert (g1.arrival, g1.preferred) == (540, 570)
    assert (g2.arrival, g2.preferred) == (585, 600)  # 9.75 h -> 09:45
    assert (inst.guides[1].available_from, inst.guides[1].available_to) == (600, 1020)
    assert inst.tour_duration == 60 and inst.max_group_size == 15
    assert inst.name == "groups"  # no instance_id: the file stem


def test_p2_repairs_are_reported():
    data = copy.deepcopy(P2_UPSTREAM)
    data["tour_guides"][0]["availability"] = [13, 9]
    data["visitor_groups"][2]["preferred_time"] = 9  # before its arrival at 10
    del data["tour_guides"][1]["max_group_size"]
    with pytest.warns(RealmRepairWarning) as record:
        inst = from_upstream_p2(data, "groups.json")
    messages = [str(w.message) for w in record]
    assert len(messages) == 3
    assert (inst.guides[0].available_from, inst.guides[0].available_to) == (540, 780)
    assert inst.groups[2].preferred == inst.groups[2].arrival == 600
    assert inst.guides[1].max_group_size == 15


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda d: d.pop("tour_guides"), "tour_guides"),
        (lambda d: d["visitor_groups"][1].pop("size"), "visitor_groups[1].size"),
        (lambda d: d["visitor_groups"][0].update({"arrival_time": "9am"}), "visitor_groups[0].arrival_time"),
        (lambda d: d["visitor_groups"][0].update({"size": 2.5}), "visitor_groups[0].size"),
        (lambda d: d["tour_guides"][1].update({"availability": [10]}), "tour_guides[1].availability"),
        (lambda d: d.update({"tour_duration": 0}), "tour_duration"),
        (lambda d: d["visitor_groups"][2].update({"group_id": "group1"}), "visitor_groups[2].group_id"),
    ],
)
def test_p2_unusable_fields_name_file_and_field(mutate, field):
    data = copy.deepcopy(P2_UPSTREAM)
    mutate(data)
    with pytest.raises(InstanceFormatError) as err:
        from_upstream_p2(data, "my_p2.json")
    assert err.value.source == "my_p2.json" and err.value.field == field


def test_files_load_through_every_entry_point(tmp_path):
    p2_path = tmp_path / "p2_groups.json"
    p2_path.write_text(json.dumps(P2_UPSTREAM))
    for loader in (load_realm_instance, load_p2):
        assert loader(p2_path) == from_upstream_p2(P2_UPSTREAM, "p2_groups.json")
    with pytest.raises(InstanceFormatError, match="no such file"):
        load_p2(tmp_path / "missing.json")


def test_envs_accept_an_upstream_path_and_solve_it_once(tmp_path):
    p2_path = tmp_path / "p2_groups.json"
    p2_path.write_text(json.dumps(P2_UPSTREAM))
    env = gym.make(P2_ID, instance=str(p2_path))
    env.reset(seed=0)
    plan = {"assignments": {"guide1": [{"group": "group1", "start": 570}, {"group": "group2", "start": 630}],
                            "guide2": [{"group": "group3", "start": 600}]}}
    *_, info = env.unwrapped.submit_plan(plan)
    metrics = finished_metrics(env, info)  # the runner's metrics
    # waiting 0 + 30 + 0, loads 2 and 1: imbalance 1 x 30
    assert metrics["cost"] == 60 and metrics["feasible"]
