"""Realm-P1-v0: your own upstream REALM-Bench files (hours to minutes, repairs, errors)."""

import copy
import json
import warnings

import gymnasium as gym
import pytest

from crab_gym.datasets import load_realm_instance
from crab_gym.envs.realm.campus_tour.formats import from_upstream_p1, load_p1
from crab_gym.envs.realm.campus_tour.oracle import brute_force_p1
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.evaluation.episode_runner import finished_metrics
from tests.realm_helpers import P1_ID, ensure_registered

ensure_registered()

P1_UPSTREAM = {
    "instance_id": "campus_tour_hand",
    "description": "Hand-written tour in the upstream shape",
    "locations": ["entrance", "library", "cafeteria", "science-lab"],
    "start_location": "entrance",
    "end_location": "entrance",
    "distances": {
        "entrance-library": 10, "library-entrance": 12,
        "entrance-cafeteria": 15, "cafeteria-entrance": 15,
        "entrance-science-lab": 20, "science-lab-entrance": 18,
        "library-cafeteria": 8, "cafeteria-library": 9,
        "library-science-lab": 12, "science-lab-library": 11,
        "cafeteria-science-lab": 7, "science-lab-cafeteria": 7,
    },
    "time_windows": {
        "entrance": [9, 17],
        "library": [9, 12],
        "cafeteria": [11.5, 14],
        "science-lab": [10, 16],
    },
    "max_duration": 180,
}


def _no_repairs(func, data, source):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RealmRepairWarning)
        return func(data, source)


def test_p1_hours_become_minutes_and_distances_stay_minutes():
    inst = _no_repairs(from_upstream_p1, P1_UPSTREAM, "tour.json")
    assert inst.name == "campus_tour_hand"
    assert inst.windows[inst.index["cafeteria"]] == (690, 840)  # 11.5 h -> 11:30
    assert inst.windows[inst.index["entrance"]] == (540, 1020)
    assert inst.departure == 540
    # "science-lab" contains a dash: keys split at the dash that names two locations
    assert inst.travel[inst.index["entrance"]][inst.index["science-lab"]] == 20
    assert inst.travel[inst.index["science-lab"]][inst.index["entrance"]] == 18
    assert inst.max_travel == 180  # read as a bound on travel minutes alone
    assert inst.targets == ["library", "cafeteria", "science-lab"]


def test_p1_repairs_are_reported_one_warning_each():
    data = copy.deepcopy(P1_UPSTREAM)
    del data["distances"]["cafeteria-library"]  # only one direction given
    data["time_windows"]["library"] = [12, 9]  # inverted
    del data["time_windows"]["science-lab"]  # missing
    data["distances"]["library-cafeteria"] = 8.4  # not whole minutes
    with pytest.warns(RealmRepairWarning) as record:
        inst = from_upstream_p1(data, "tour.json")
    messages = [str(w.message) for w in record]
    assert len(messages) == 4
    assert any("cafeteria-library" in m and "used 'library-cafeteria'" in m for m in messages)
    assert any("'library'" in m and "inverted" in m for m in messages)
    assert any("'science-lab'" in m and "missing" in m for m in messages)
    assert any("rounded 2" in m for m in messages)  # 8.4 both ways after the fill
    assert inst.travel[inst.index["cafeteria"]][inst.index["library"]] == 8
    assert inst.windows[inst.index["library"]] == (540, 720)
    assert inst.windows[inst.index["science-lab"]] == (540, 1020)  # the span of all windows


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda d: d.pop("distances"), "distances"),
        (lambda d: d["distances"].update({"entrance-gym": 5}), "distances['entrance-gym']"),
        (lambda d: d["distances"].update({"entrance-library": "ten"}), "distances['entrance-library']"),
        (lambda d: d["distances"].update({"entrance-library": -3}), "distances['entrance-library']"),
        (lambda d: [d["distances"].pop("library-cafeteria"), d["distances"].pop("cafeteria-library")],
         "distances['library-cafeteria']"),
        (lambda d: d.update({"start_location": "gate"}), "start_location"),
        (lambda d: d["time_windows"].update({"library": [9]}), "time_windows['library']"),
        (lambda d: d["time_windows"].update({"library": [9, 99]}), "time_windows['library'][1]"),
        (lambda d: d["time_windows"].update({"gym": [9, 10]}), "time_windows['gym']"),
        (lambda d: d.update({"max_duration": "long"}), "max_duration"),
        (lambda d: d.update({"locations": ["entrance", "entrance"]}), "locations"),
    ],
)
def test_p1_unusable_fields_name_file_and_field(mutate, field):
    data = copy.deepcopy(P1_UPSTREAM)
    mutate(data)
    with pytest.raises(InstanceFormatError) as err:
        from_upstream_p1(data, "my_p1.json")
    assert err.value.source == "my_p1.json" and err.value.field == field
    assert str(err.value).startswith(f"my_p1.json: field '{field}'")


def test_files_load_through_every_entry_point(tmp_path):
    p1_path = tmp_path / "p1_tour.json"
    p1_path.write_text(json.dumps(P1_UPSTREAM))
    for loader in (load_realm_instance, load_p1):
        assert loader(p1_path) == from_upstream_p1(P1_UPSTREAM, "p1_tour.json")
    bad = tmp_path / "broken.json"
    bad.write_text('{"locations": [\n  "a",\n}')
    with pytest.raises(InstanceFormatError, match=r"broken.json, line 3"):
        load_p1(bad)


def test_envs_accept_an_upstream_path_and_solve_it_once(tmp_path):
    p1_path = tmp_path / "p1_tour.json"
    p1_path.write_text(json.dumps(P1_UPSTREAM))
    route = {"route": ["entrance", "library", "science-lab", "cafeteria", "entrance"]}
    # the default, reference_solve="deferred": the episode solves nothing, the runner's finish does
    lazy = gym.make(P1_ID, instance=str(p1_path))
    lazy.reset(seed=0)
    *_, lazy_info = lazy.unwrapped.submit_plan(route)
    assert lazy_info["metrics"]["optimality_pending"] and lazy_info["metrics"]["optimality"] is None
    assert lazy.unwrapped.reference.status == "PENDING" and not list((tmp_path / "cache").rglob("*.json"))
    env = gym.make(P1_ID, instance=str(p1_path), reference_solve="inline")
    env.reset(seed=0)
    # entrance-library-science-lab-cafeteria-entrance = 10+12+7+15 minutes of walking
    *_, info = env.unwrapped.submit_plan(route)
    assert info["metrics"]["feasible"] and info["metrics"]["travel_minutes"] == 44
    assert env.unwrapped.reference.source == "solved"
    # the optimum waits at the cafeteria for 11:30: library-cafeteria-science-lab = 10+8+7+18
    assert brute_force_p1(env.unwrapped.instance)[0] == 43
    assert info["metrics"]["reference"] == 43 and info["metrics"]["optimality"] == pytest.approx(43 / 44)
    env2 = gym.make(P1_ID, instance=str(p1_path), reference_solve="inline")
    env2.reset(seed=0)
    assert env2.unwrapped.reference.source == "cache"  # solved once, then on disk
    assert finished_metrics(lazy, lazy_info) == info["metrics"]  # the deferred episode, finished: the same numbers
