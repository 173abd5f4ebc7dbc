"""Reading P7 files: crab_gym's own JSON, upstream-shaped mappings (written by hand here), and
every file of a user's own upstream copy when ``CRAB_GYM_REALM_DIR`` points at it."""

from __future__ import annotations

import copy
import json
import os
import warnings
from pathlib import Path

import pytest

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.disaster_relief.formats import load_p7, shipped_p7_names
from crab_gym.envs.realm.disaster_relief.generator import generate_p7
from crab_gym.envs.realm.disaster_relief.model import ResourceShortage, WeatherEvent

#: An upstream-shaped P7 mapping (made up for the test, in upstream's layout).
UPSTREAM = {
    "instance_id": "hand_p7",
    "regions": [
        {"id": "region1", "severity": "critical", "needs": ["medical", "food"], "population": 1000,
         "location": {"lat": 40.0, "lon": -90.0}},
        {"id": "region2", "severity": "urgent", "needs": ["water", "shelter"], "population": 2000,
         "location": {"lat": 40.0, "lon": -88.0}},
    ],
    "resources": {"medical_supplies": 900, "food": 4000, "water": 1500, "shelter": 600},
    "personnel": {"doctors": 10, "nurses": 20, "logistics": 5},
    "vehicles": [
        {"id": "helicopter1", "type": "helicopter", "capacity": 1000, "speed": "fast", "location": "base"},
        {"id": "truck1", "type": "truck", "capacity": 5000, "speed": "slow", "location": "base"},
    ],
    "deadlines": {"critical": 2, "urgent": 6, "normal": 24},
    "disruption_scenarios": [
        {"type": "weather_event", "region": "region1", "impact": "transport_blocked", "duration": 3},
        {"type": "resource_shortage", "resource": "medical_supplies", "shortage": 0.25},
    ],
    "description": "a hand-made upstream-shaped file",
}


def read(data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load_p7(data)
    return inst, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


def test_upstream_mapping_is_converted_and_every_fill_reported():
    inst, fills = read(copy.deepcopy(UPSTREAM))
    assert inst.name == "hand_p7" and inst.start == 480 and inst.horizon == 480 + 24 * 60
    r1, r2 = inst.regions
    assert r1.needs == {"medical_supplies": 200, "food": 1000}  # 0.2 and 1.0 per person
    assert r2.needs == {"water": 2000, "shelter": 500}  # 1.0 and 0.25 per person
    assert (r1.deadline, r2.deadline) == (600, 840)
    # the base at the centroid: both regions ~85 km away, on opposite sides
    assert r1.x == pytest.approx(-r2.x) and 80 < abs(r1.x) < 90 and r1.y == 0.0
    assert [v.speed_kmh for v in inst.vehicles] == [200.0, 60.0]
    assert inst.one_way == [[30, 30], [90, 90]]
    weather, shortage = inst.disruptions
    assert isinstance(weather, WeatherEvent) and (weather.start, weather.duration) == (540, 180)
    assert isinstance(shortage, ResourceShortage) and (shortage.start, shortage.fraction) == (600, 0.25)
    assert len(fills) == 8
    assert any("regions[0].needs" in f and "medical_supplies 200" in f for f in fills)
    assert any("vehicles[0].speed" in f and "200 km/h" in f for f in fills)
    assert any(f.endswith("base: no coordinates; put at the centroid of the regions (lat 40.0000, lon -89.0000)")
               for f in fills)


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["regions"][0].update(severity="dire"), "regions[0].severity"),
    (lambda d: d["regions"][1]["location"].update(lat="north"), "regions[1].location.lat"),
    (lambda d: d["regions"][0].update(needs=["medical", "fuel"]), "regions[0].needs[1]"),
    (lambda d: d["vehicles"][1].update(speed="warp"), "vehicles[1].speed"),
    (lambda d: d["vehicles"][0].update(capacity=-5), "vehicles[0].capacity"),
    (lambda d: d["resources"].update(fuel=3), "resources.fuel"),
    (lambda d: d["disruption_scenarios"][0].update(region="region9"), "disruption_scenarios[0].region"),
    (lambda d: d["disruption_scenarios"][1].update(type="earthquake"), "disruption_scenarios[1].type"),
    (lambda d: d["regions"][1].update(id="region1"), "regions[1].id"),
    (lambda d: d.pop("regions"), "regions"),
])
def test_malformed_upstream_files_name_file_and_field(tmp_path, edit, field):
    data = copy.deepcopy(UPSTREAM)
    edit(data)
    path = tmp_path / "broken_p7.json"
    path.write_text(json.dumps(data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        with pytest.raises(InstanceFormatError) as err:
            load_p7(path)
    assert err.value.source == "broken_p7.json" and err.value.field == field


def test_own_format_round_trips_and_is_checked(tmp_path):
    inst = generate_p7("medium", 3, name="mine")
    path = tmp_path / "mine.json"
    path.write_text(inst.model_dump_json())
    assert load_p7(path) == inst
    bad = json.loads(inst.model_dump_json())
    bad["regions"][0]["deadline"] = bad["start"] + 7
    path.write_text(json.dumps(bad))
    with pytest.raises(InstanceFormatError) as err:
        load_p7(path)
    assert err.value.field == "regions[0].deadline"


def test_shipped_instances_three_sizes():
    names = shipped_p7_names()
    assert len(names) == 20
    assert {n.split("_")[1] for n in names} == {"small", "medium", "large"}
    assert load_p7("p7_large_05") == generate_p7("large", 5, name="p7_large_05")


REALM_DIR = os.environ.get("CRAB_GYM_REALM_DIR")


@pytest.mark.skipif(not REALM_DIR, reason="set CRAB_GYM_REALM_DIR to an upstream REALM-Bench datasets folder")
def test_every_upstream_p7_file_loads():
    files = sorted((Path(REALM_DIR) / "P7" / "processed").glob("*.json"))
    assert files, f"no P7 files under {REALM_DIR}/P7/processed"
    for path in files:
        inst, fills = read(path)
        assert len(inst.regions) >= 1 and len(inst.vehicles) >= 1
        assert fills, f"{path.name}: upstream files always need fills"
