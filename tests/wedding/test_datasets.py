"""The P5/P8 readers: crab_gym's JSON, upstream-shaped files (with every repair reported),
malformed input, and (opt-in) every file of a user's own upstream copy."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

from crab_gym.datasets import InstanceFormatError, RealmRepairWarning, load_realm_instance
from crab_gym.envs.realm.wedding.formats import load_p5, load_p8, shipped_p5_names, shipped_p8_names
from crab_gym.envs.realm.wedding.model import P8Instance, WeddingInstance
from tests.wedding.upstream_files import p5_mapping, p8_mapping


def _read(loader, data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = loader(data)
    return inst, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


def test_upstream_p5_is_completed_with_reported_defaults():
    inst, notes = _read(load_p5, p5_mapping())
    assert isinstance(inst, WeddingInstance) and not isinstance(inst, P8Instance)
    assert inst.venue == "V"
    assert [g.guest_id for g in inst.guests] == ["mira", "teo"]
    assert inst.guests[0].arrival == 10 * 60 + 40
    uma = inst.vehicles[-1]
    assert (uma.vehicle_id, uma.driver, uma.capacity, uma.available) == ("uma", "uma", 3, 11 * 60 + 30)
    assert [v.vehicle_id for v in inst.vehicles] == ["bus", "sedan", "uma"]
    assert {"hotel", "church", "florist", "bakery"} <= set(inst.places)
    errands = {e.errand_id: e for e in inst.errands}
    assert errands["gift"].shop == "S" and errands["gift"].opens == 11 * 60
    assert errands["tailor"].shop == "K" and errands["tailor"].closes == 13 * 60 + 30
    assert errands["flowers"].shop == "florist"
    assert (inst.photo_time, inst.deadline) == (14 * 60 + 45, 17 * 60 + 30)
    assert inst.travel[inst.index["S"], inst.index["A"]] == 35  # the other direction, filled
    text = " | ".join(notes)
    for fill in ("one direction", "hotel", "church", "flowers", "cake", "gift_store_opens", "tailor_closes",
                 "car_capacity", "no start time"):
        assert fill in text, fill
    assert len(notes) == len(set(notes))  # once per fill


def test_upstream_p8_maps_its_road_names_onto_the_town():
    inst, notes = _read(load_p8, p8_mapping())
    assert isinstance(inst, P8Instance)
    closure, delay = inst.disruptions
    assert (closure.type, closure.route, closure.start, closure.duration) == ("road_closure", "hotel-church", 750, 50)
    assert (delay.route, delay.delay, delay.start) == ("A-hotel", 25, 13 * 60 + 15)
    assert delay.duration == inst.deadline - delay.start  # until the deadline, reported
    text = " | ".join(notes)
    assert "'airport' is not a key of locations; read as 'A'" in text
    assert "duration missing" in text


def test_a_p8_file_reads_as_p5_and_a_p5_file_as_p8_without_disruptions():
    assert type(_read(load_p5, p8_mapping())[0]) is WeddingInstance
    assert _read(load_p8, p5_mapping())[0].disruptions == []


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d.pop("guests"), "guests"),
        (lambda d: d["guests"][0].update(arrival_time="25:99"), "guests[0].arrival_time"),
        (lambda d: d["vehicles"][1].update(capacity=0), "vehicles[1].capacity"),
        (lambda d: d["travel_times"].update({"A-X": 4}), "travel_times['A-X']"),
        (lambda d: d["travel_times"].update({"A-S": -3}), "travel_times['A-S']"),
        (lambda d: d["constraints"].update(photo_time="noon"), "constraints.photo_time"),
        (lambda d: d.update(locations=["A", "S"]), "locations"),
        (lambda d: d.update(locations={"A": "Airport", "S": "Shop", "K": "Tailor", "V": "Hall"}), "locations"),
        (lambda d: d["guests"][2].update(car_capacity=1), "guests[2].car_capacity"),
    ],
)
def test_malformed_upstream_files_name_the_file_and_field(tmp_path, edit, field):
    data = p5_mapping()
    edit(data)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceFormatError) as err, warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        load_p5(path)
    assert err.value.source == "broken.json"
    assert err.value.field == field


def test_malformed_p8_disruptions_are_rejected():
    data = p8_mapping()
    data["disruptions"][0]["type"] = "earthquake"
    with pytest.raises(InstanceFormatError, match="earthquake") as err, warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        load_p8(data)
    assert err.value.field == "disruptions[0].type"


def test_our_own_json_round_trips_and_bad_fields_are_named(tmp_path):
    inst = load_p8("p8_small_00")
    assert load_p8(json.loads(inst.model_dump_json())).model_dump() == inst.model_dump()
    data = json.loads(inst.model_dump_json())
    data["guests"][0]["place"] = "nowhere"
    with pytest.raises(InstanceFormatError) as err:
        load_p8(data)
    assert err.value.field == "guests[0].place"


def test_facade_and_gym_make_read_upstream_files(tmp_path):
    for name, data, cls, env_id in (("p5.json", p5_mapping(), WeddingInstance, "Realm-P5-v0"),
                                    ("p8.json", p8_mapping(), P8Instance, "Realm-P8-v0")):
        path = tmp_path / name
        path.write_text(json.dumps(data))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RealmRepairWarning)
            assert type(load_realm_instance(path)) is cls
            env = gym.make(env_id, instance=str(path))
        env.reset(seed=0)
        assert env.unwrapped.instance.n_items == 6


def test_shipped_sets_have_twenty_instances_each_with_a_reference():
    from crab_gym.envs.realm.common.references import shipped_records
    from crab_gym.envs.realm.wedding.model import INSTANCE_DIRS

    for names, key in ((shipped_p5_names(), "p5"), (shipped_p8_names(), "p8")):
        assert len(names) == 20
        records = shipped_records(INSTANCE_DIRS[key])
        assert set(records) == set(names)
        for rec in records.values():
            assert rec["workers"] == 1 and rec["value"] is not None and rec["plan"]["routes"]
    statuses = [r["status"] for r in shipped_records(INSTANCE_DIRS["p5"]).values()]
    assert statuses.count("OPTIMAL") >= 7  # at least every small one is proven optimal


UPSTREAM = os.environ.get("CRAB_GYM_REALM_DIR")


@pytest.mark.skipif(not UPSTREAM, reason="set CRAB_GYM_REALM_DIR to an upstream REALM-Bench datasets folder")
@pytest.mark.parametrize("folder, cls", [("P5/custom", WeddingInstance), ("P8/disruptions", P8Instance)])
def test_every_upstream_file_loads(folder, cls):
    files = sorted(Path(UPSTREAM, folder).glob("*.json"))
    assert files, f"no files in {folder}"
    for path in files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            inst = load_realm_instance(path)
        assert type(inst) is cls, path
        assert any(issubclass(w.category, RealmRepairWarning) for w in caught)
        assert inst.n_guests >= 1 and inst.n_errands >= 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        env = gym.make("Realm-P8-v0" if cls is P8Instance else "Realm-P5-v0", instance=str(files[0]))
    env.reset(seed=0)
