"""Issue 28, item 7: files that loaded and then failed or misbehaved are refused (or bounded)
at load, with an error naming the file and the field.

* P5/P8: a guest landing (or a shop opening) after the deadline made the routing oracle's
  ``SetRange`` fail at the last step (``Exception: CP Solver fail``).
* P6/P9 ``kitchen_capacity`` above the number of tasks put ``kitchen_free`` outside its Box;
  P10 ``lead_time`` above 400 days put the observation outside its Box.
* Empty ids became agents (and action enum values) named "".
* P10 upstream ``dependencies`` against the stage order, or in a cycle, loaded silently.
"""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401  (registers the env ids)
from crab_gym.datasets import RealmRepairWarning
from crab_gym.envs.realm.disaster_relief.formats import load_p7
from crab_gym.envs.realm.supply_chain.formats import load_p10, shipped_p10_names
from crab_gym.envs.realm.supply_chain.model import INSTANCE_DIR as P10_DIR
from crab_gym.envs.realm.thanksgiving.formats import load_p6, shipped_p6_names
from crab_gym.envs.realm.thanksgiving.generator import generate as generate_p6
from crab_gym.envs.realm.thanksgiving.model import INSTANCE_DIRS as P6_DIRS
from crab_gym.envs.realm.wedding.formats import load_p5, load_p8
from crab_gym.envs.realm.wedding.model import INSTANCE_DIRS as P5_DIRS
from tests.datasets.test_bad_files import bad_file
from tests.disaster_relief.test_formats import UPSTREAM as UPSTREAM_P7
from tests.supply_chain.test_formats import UPSTREAM as UPSTREAM_P10
from tests.thanksgiving.conftest import UPSTREAM_P6
from tests.wedding.upstream_files import p5_mapping


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


def _shipped(folder: Path, name: str) -> dict:
    return json.loads((folder / f"{name}.json").read_text())


def _refused(load: Any, tmp_path: Path, data: Any, field: str) -> str:
    """Write ``data`` as ``bad.json``; its load is an InstanceFormatError naming the file and ``field``."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return str(bad_file(load, path, field))


# ------------------------------------------------------------------ P5/P8: after the deadline
def test_a_guest_landing_after_the_deadline_is_refused_at_load(tmp_path):
    data = _shipped(P5_DIRS["p5"], "p5_small_00")
    data["guests"][0]["arrival"] = 2700  # loaded, then step() raised "CP Solver fail"
    text = _refused(load_p5, tmp_path, data, "guests[0].arrival")
    assert text == ("bad.json: field 'guests[0].arrival': the guest lands at minute 2700, after the deadline "
                    "(minute 1080), when every vehicle has ended at the venue")


def test_a_shop_opening_after_the_deadline_is_refused_in_p8(tmp_path):
    data = _shipped(P5_DIRS["p8"], sorted(p.stem for p in P5_DIRS["p8"].glob("p8_*.json"))[0])
    data["errands"][0].update(opens=data["deadline"] + 1, closes=data["deadline"] + 100)
    text = _refused(load_p8, tmp_path, data, "errands[0].opens")
    assert f"the shop opens at minute {data['deadline'] + 1}, after the deadline" in text


def test_an_upstream_arrival_at_46_00_is_refused(tmp_path):
    data = p5_mapping()
    data["guests"][1]["arrival_time"] = "46:00"
    text = _refused(load_p5, tmp_path, data, "guests[1].arrival_time")
    assert text == "bad.json: field 'guests[1].arrival_time': the guest lands at 46:00, after the wedding deadline (17:30)"


def test_a_guest_landing_at_the_deadline_still_loads_and_plays(tmp_path):
    """The bound is the deadline itself: such a guest is served late or not at all, and the
    episode ends with metrics (the oracle's horizon holds the stop)."""
    data = _shipped(P5_DIRS["p5"], "p5_small_00")
    data["guests"][0]["arrival"] = data["deadline"]
    path = tmp_path / "late.json"
    path.write_text(json.dumps(data))
    env = gym.make("Realm-P5-v0", instance=str(path))
    from crab_gym.envs.realm.wedding.heuristics import greedy_action

    env.reset(seed=0)
    for _ in range(200):
        *_, terminated, truncated, info = env.step(greedy_action(env))
        if terminated or truncated:
            break
    assert terminated and "metrics" in info


# ------------------------------------------------------------------ P6/P9 and P10: observation bounds
def test_a_kitchen_larger_than_the_task_list_is_read_as_one_place_per_task(tmp_path):
    data = _shipped(P6_DIRS["p6"], shipped_p6_names()[0])
    n = len(data["tasks"])
    data["kitchen_capacity"] = n + 30
    path = tmp_path / "big_kitchen.json"
    path.write_text(json.dumps(data))
    with pytest.warns(RealmRepairWarning, match=rf"kitchen_capacity {n + 30} is above the number of tasks \({n}\); "
                                                rf"read as {n}"):
        inst = load_p6(path)
    assert inst.kitchen_capacity == n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        env = gym.make("Realm-P6-v0", instance=str(path))
        obs, _ = env.reset(seed=0)
    assert obs["kitchen_free"][0] == n and env.observation_space["kitchen_free"].contains(obs["kitchen_free"])


def test_an_upstream_kitchen_larger_than_the_task_list_is_repaired_with_the_file_named():
    data = copy.deepcopy(UPSTREAM_P6)
    data["constraints"] = {"dinner_deadline": "18:30", "kitchen_capacity": 40}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load_p6(data)
    n = len(data["cooking_tasks"])
    assert inst.kitchen_capacity == n
    notes = [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]
    assert f"<mapping>: kitchen_capacity 40 is above the number of cooking tasks ({n}); read as {n}, since no more " \
           "tasks can run at once" in notes


def test_generated_kitchens_stay_within_the_task_count():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        inst = generate_p6("small", 0, n_tasks=1)
    assert inst.kitchen_capacity == 1


def test_a_lead_time_beyond_the_longest_plan_is_refused(tmp_path):
    data = _shipped(P10_DIR, shipped_p10_names()[0])
    data["suppliers"][0]["lead_time"] = 401  # loaded; the observation left Box(0, 400)
    text = _refused(load_p10, tmp_path, data, "suppliers[0].lead_time")
    assert text == "bad.json: field 'suppliers[0].lead_time': Input should be less than or equal to 400, got 401"
    data["suppliers"][0]["lead_time"] = 400
    path = tmp_path / "edge.json"
    path.write_text(json.dumps(data))
    assert load_p10(path).suppliers[0].lead_time == 400


# ------------------------------------------------------------------ empty ids
@pytest.mark.parametrize(
    ("load", "folder", "name", "part", "key", "field"),
    [
        (load_p6, P6_DIRS["p6"], None, "cars", "car_id", "cars[0].car_id"),
        (load_p6, P6_DIRS["p6"], None, "members", "member_id", "members[0].member_id"),
        (load_p10, P10_DIR, None, "suppliers", "supplier_id", "suppliers[0].supplier_id"),
    ],
)
def test_empty_ids_in_our_own_files_are_refused(tmp_path, load, folder, name, part, key, field):
    first = sorted(p.stem for p in folder.glob("p*_*.json"))[0]
    data = _shipped(folder, first)
    data[part][0][key] = ""
    text = _refused(load, tmp_path, data, field)
    assert text == f"bad.json: field '{field}': String should have at least 1 character, got ''"


@pytest.mark.parametrize(
    ("where", "field", "got"),
    [
        (("vehicles", 0, "id"), "vehicles[0].id", "''"),
        (("family_members", 1, "id"), "family_members[1].id", "' '"),
    ],
)
def test_empty_ids_in_upstream_p6_files_are_refused(tmp_path, where, field, got):
    data = copy.deepcopy(UPSTREAM_P6)
    part, k, key = where
    data[part][k][key] = got.strip("'")
    text = _refused(load_p6, tmp_path, data, field)
    assert text == f"bad.json: field '{field}': expected a non-empty id, got {got}"


def test_an_empty_upstream_p7_vehicle_type_is_refused_and_a_missing_one_reported(tmp_path):
    data = copy.deepcopy(UPSTREAM_P7)
    data["vehicles"][1]["type"] = ""  # was read as "vehicle", silently
    text = _refused(load_p7, tmp_path, data, "vehicles[1].type")
    assert text == "bad.json: field 'vehicles[1].type': expected a non-empty name, got ''"
    del data["vehicles"][1]["type"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load_p7(data)
    assert inst.vehicles[1].type == "vehicle"
    assert "<mapping>: vehicles[1].type: missing; used 'vehicle'" in [str(w.message) for w in caught]


# ------------------------------------------------------------------ P10 upstream dependencies
@pytest.mark.parametrize(
    ("deps", "field", "message"),
    [
        ([["packaging", "testing"]], "dependencies[0]",
         "'packaging' before 'testing' contradicts the model's order (components, then assembly, then testing, "
         "then packaging)"),
        ([["memory", "assembly"], ["gpu_chips", "memory"]], "dependencies[1]",
         "'gpu_chips' before 'memory' contradicts the model's order (components, then assembly, then testing, "
         "then packaging)"),
        ([["assembly", "testing"], ["testing", "packaging"], ["packaging", "assembly"]], "dependencies",
         "the pairs form a cycle: testing -> packaging -> assembly -> testing"),
        ([["assembly", "assembly"]], "dependencies", "the pairs form a cycle: assembly -> assembly"),
    ],
)
def test_p10_upstream_dependencies_against_the_stage_order_are_refused(tmp_path, deps, field, message):
    data = copy.deepcopy(UPSTREAM_P10)
    data["dependencies"] = deps
    assert _refused(load_p10, tmp_path, data, field) == f"bad.json: field '{field}': {message}"


def test_p10_upstream_dependencies_in_the_stage_order_still_load():
    data = copy.deepcopy(UPSTREAM_P10)
    data["dependencies"] = [["gpu_chips", "assembly"], ["memory", "assembly"], ["assembly", "testing"],
                            ["testing", "packaging"], ["fans", "packaging"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inst = load_p10(data)
    assert [f.facility_id for f in inst.facilities] == ["assembly", "testing", "packaging"]
