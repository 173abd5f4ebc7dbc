"""Instances: generators, upstream conversion (with repairs), typed disruptions, shipped files."""

from __future__ import annotations

import json
import warnings

import networkx as nx
import pytest

from crab_gym.datasets import load_realm_instance
from crab_gym.envs.realm.common.disruptions import InvalidDisruptionError
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.ridesharing.checker import check_plan
from crab_gym.envs.realm.ridesharing.disruptions import (
    Accident,
    Construction,
    RoadClosure,
    TrafficDelay,
    parse_disruption,
)
from crab_gym.envs.realm.ridesharing.formats import (
    from_upstream_p3,
    load_p3,
    load_p4,
    shipped_p3_names,
    shipped_p4_names,
)
from crab_gym.envs.realm.ridesharing.generator import (
    generate_p3,
    generate_p3_with_plan,
    generate_p4,
    generate_p4_with_plan,
)
from crab_gym.envs.realm.ridesharing.model import INSTANCE_DIRS, P3Instance, P4Instance
from crab_gym.envs.realm.ridesharing.references import shipped_references

from . import upstream_files as up

CORE = {"name", "description", "size", "coords"}


# ------------------------------------------------------------------------- generators
@pytest.mark.parametrize("size", ["small", "medium", "large"])
def test_generators_are_seeded_and_feasible(size):
    a, plan = generate_p3_with_plan(size, 7)
    assert a == generate_p3(size, 7)
    assert a != generate_p3(size, 8)
    # the hidden plan serves everyone on time: checked by the independent checker
    report = check_plan(a, {"assignments": plan})
    assert report["feasible"] and report["served"] == a.n_requests
    b, plan4 = generate_p4_with_plan(size, 7)
    assert b == generate_p4(size, 7) and b.disruptions
    report4 = check_plan(b, {"assignments": plan4})
    assert report4["feasible"] and report4["served"] == b.n_requests


def test_generated_shapes_follow_realm():
    inst = generate_p4("medium", 3)
    data = inst.to_upstream()
    assert set(data) >= {"city_map", "ride_requests", "vehicles", "disruptions"}
    assert set(data["city_map"]) == {"locations", "distances"}
    req = data["ride_requests"][0]
    assert set(req) == {"passenger_id", "pickup", "dropoff", "time_window", "deadline"}
    assert all(r["time_window"][0] <= r["time_window"][1] for r in data["ride_requests"])  # no inverted window
    assert set(data["vehicles"][0]) == {"vehicle_id", "location", "capacity", "fuel"}
    d = data["disruptions"][0]
    assert {"type", "start_time", "duration", "impact"} <= set(d)


@pytest.mark.parametrize("make, load", [(generate_p3, load_p3), (generate_p4, load_p4)])
def test_upstream_round_trip(make, load):
    inst = make("small", 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # our own exports need no repair
        back = load(json.loads(json.dumps(inst.to_upstream())))
    assert type(back) is type(inst)
    assert back.model_dump(exclude=CORE) == inst.model_dump(exclude=CORE)


def test_travel_is_shortest_path_over_roads():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        inst = from_upstream_p3(up.p3_mapping(), "p3.json")
    g = nx.DiGraph()
    for i, a in enumerate(inst.locations):
        for j, b in enumerate(inst.locations):
            if i != j and inst.roads[i][j] is not None:
                g.add_edge(a, b, w=inst.roads[i][j])
    sp = dict(nx.all_pairs_dijkstra_path_length(g, weight="w"))
    for i, a in enumerate(inst.locations):
        for j, b in enumerate(inst.locations):
            assert inst.travel[i, j] == (0 if a == b else sp[a][b])
    # depot -> harbor is listed as 30 but depot -> old-town -> harbor takes 12 + 15 = 27
    assert inst.travel[inst.index["depot"], inst.index["harbor"]] == 27


# ------------------------------------------------------------------------- upstream files
def test_load_p3_upstream_file_with_inverted_window(tmp_path):
    path = up.write(tmp_path, "p3_hand.json", up.p3_mapping())
    with pytest.warns(RealmRepairWarning) as caught:
        inst = load_realm_instance(path)
    assert type(inst) is P3Instance
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2, messages
    inverted = [m for m in messages if "inverted" in m]
    assert len(inverted) == 1 and "ride_requests[1].time_window" in inverted[0] and "p3_hand.json" in inverted[0]
    assert any("museum-harbor" in m or "harbor-museum" in m for m in messages)
    ann, bob, cy = inst.requests
    assert ann.pickup_window == (9 * 60 + 15, 9 * 60 + 45)
    assert ann.latest_dropoff == 9 * 60 + 45 + 30  # our reading: window end + deadline
    assert bob.pickup_window == (8 * 60 + 45, 9 * 60 + 25)  # start moved back one hour
    assert bob.latest_dropoff == 9 * 60 + 25 + 45
    assert cy.pickup_window == (630, 660)
    assert inst.start_time == 7 * 60  # one hour before the hour of the first window
    assert [v.capacity for v in inst.vehicles] == [2, 3] and inst.vehicles[0].fuel == 80
    assert inst.roads[inst.index["harbor"]][inst.index["museum"]] == 9  # filled from museum-harbor


def test_load_p4_upstream_file_with_disruptions(tmp_path):
    path = up.write(tmp_path, "p4_hand.json", up.p4_mapping())
    with pytest.warns(RealmRepairWarning):
        inst = load_realm_instance(path)
    assert type(inst) is P4Instance
    traffic, accident, closure, works = inst.disruptions
    assert isinstance(traffic, TrafficDelay) and traffic.route == "old-town-harbor"
    assert (traffic.start, traffic.duration, traffic.delay) == (540, 90, 20)
    assert isinstance(accident, Accident) and accident.location == "museum" and accident.delay == 15
    assert isinstance(closure, RoadClosure) and (closure.start, closure.end) == (660, 720)
    assert isinstance(works, Construction) and works.delay == 10 and works.impact == "reduced_capacity"


@pytest.mark.parametrize(("problem", "family"), [("p1", "campus_tour"), ("p2", "group_tours")])
def test_dispatcher_reaches_other_problems(tmp_path, problem, family):
    data = up.p1_mapping() if problem == "p1" else up.p2_mapping()
    path = up.write(tmp_path, f"{problem}.json", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        inst = load_realm_instance(path)
    assert type(inst).__module__ == f"crab_gym.envs.realm.{family}.model"


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["ride_requests"][2].update(pickup="mars"), "ride_requests[2].pickup"),
        (lambda d: d["ride_requests"][0].update(time_window=[9.0]), "ride_requests[0].time_window"),
        (lambda d: d["ride_requests"][0].pop("deadline"), "ride_requests[0].deadline"),
        (lambda d: d["vehicles"][1].update(capacity=0), "vehicles[1].capacity"),
        (lambda d: d["city_map"]["distances"].update({"depot-mars": 3}), "city_map.distances['depot-mars']"),
        (lambda d: d["disruptions"][0].update(route="depot-mars"), "disruptions[0].route"),
        (lambda d: d["disruptions"][1].update(location="mars"), "disruptions[1].location"),
        (lambda d: d["disruptions"][2].update(duration=-5), "disruptions[2].duration"),
        (lambda d: d["disruptions"][0].update(type="flood"), "disruptions[0].type"),
    ],
)
def test_bad_upstream_files_name_file_and_field(tmp_path, mutate, field):
    data = up.p4_mapping()
    mutate(data)
    path = up.write(tmp_path, "broken.json", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        with pytest.raises(InstanceFormatError) as err:
            load_realm_instance(path)
    assert err.value.source == "broken.json"
    assert err.value.field == field, str(err.value)


def test_bad_json_and_unknown_shape(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"city_map": {\n  "locations": [1,\n}')
    with pytest.raises(InstanceFormatError) as err:
        load_realm_instance(bad)
    assert err.value.line is not None and "bad.json" in str(err.value)
    other = up.write(tmp_path, "other.json", {"jobs": []})
    with pytest.raises(InstanceFormatError, match="not a REALM-Bench P1-P10 file"):
        load_realm_instance(other)


# ------------------------------------------------------------------------- disruptions
def test_typed_disruptions_validate():
    inst = generate_p4("small", 2)
    a, b = inst.locations[:2]
    d = parse_disruption({"type": "road_closure", "route": f"{a}-{b}", "start": 500, "duration": 30}, inst)
    assert isinstance(d, RoadClosure) and d.end == 530
    assert d.added_minutes(510) == 20 and d.added_minutes(529) == 1
    with pytest.raises(InvalidDisruptionError, match="unknown route"):
        parse_disruption({"type": "traffic_delay", "route": f"{a}-nowhere", "delay": 5, "duration": 10}, inst)
    with pytest.raises(InvalidDisruptionError, match="unknown location"):
        parse_disruption({"type": "accident", "location": "nowhere", "duration": 10}, inst)
    with pytest.raises(InvalidDisruptionError, match="duration"):
        parse_disruption({"type": "construction", "route": f"{a}-{b}", "duration": -1}, inst)
    with pytest.raises(InvalidDisruptionError, match="delay"):
        parse_disruption({"type": "traffic_delay", "route": f"{a}-{b}", "duration": 5, "delay": -3}, inst)
    with pytest.raises(InvalidDisruptionError, match="types"):
        parse_disruption({"type": "meteor", "duration": 5}, inst)


# ------------------------------------------------------------------------- shipped
def test_twenty_shipped_instances_each_with_references():
    for problem, names, load in (("p3", shipped_p3_names(), load_p3), ("p4", shipped_p4_names(), load_p4)):
        assert len(names) == 20
        sizes = {n.split("_")[1] for n in names}
        assert sizes == {"small", "medium", "large"}
        refs = shipped_references(problem)
        assert set(refs) == set(names)
        for name in names:
            inst = load(name)
            ref = refs[name]
            assert ref["fingerprint"] == inst.fingerprint()
            assert {"value", "status", "time_limit_s", "workers", "plan"} <= set(ref)
            assert ref["workers"] == 1 and ref["value"] > 0
            if problem == "p3":
                assert ref["time_limit_s"] > 0
            else:  # no clock: solution limits and pass counts end every search
                assert ref["time_limit_s"] is None and ref["resolve_search"] and ref["local_search_passes"] > 0
            assert json.loads(inst.to_json()) == json.loads(
                (INSTANCE_DIRS[problem] / f"{name}.json").read_text()
            )


def test_loaders_accept_names_paths_mappings_and_reject_other_problems(tmp_path):
    inst = load_p3("p3_small_01")
    path = tmp_path / "mine.json"
    path.write_text(inst.to_json())
    assert load_p3(path) == inst and load_p3(json.loads(inst.to_json())) == inst
    as_p4 = load_p4(inst)  # a plain P3 instance is P4 without disruptions
    assert isinstance(as_p4, P4Instance) and as_p4.disruptions == []
    p4 = load_p4("p4_small_01")
    path4 = tmp_path / "mine4.json"
    path4.write_text(p4.to_json())
    assert load_p4(path4) == p4
    p1 = up.write(tmp_path, "p1.json", up.p1_mapping())
    with pytest.raises(InstanceFormatError, match="P1 file, not a ride-sharing"):
        load_p3(p1)
    with pytest.raises(InstanceFormatError, match="not a shipped P3 instance"):
        load_p3("p3_nope_99")
