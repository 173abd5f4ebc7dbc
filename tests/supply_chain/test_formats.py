"""P10 instances: the generator, our JSON format, the upstream reader and its repairs."""

from __future__ import annotations

import copy
import json
import os
import warnings
from pathlib import Path

import pytest

from crab_gym.datasets import InstanceFormatError, RealmRepairWarning, list_instances, load_instance
from crab_gym.datasets.upstream import load_realm_instance
from crab_gym.envs.realm.supply_chain.formats import from_upstream_p10, load_p10, shipped_p10_names
from crab_gym.envs.realm.supply_chain.generator import generate_p10
from crab_gym.envs.realm.supply_chain.model import P10Instance, Shortage
from crab_gym.envs.realm.supply_chain.references import reference_p10, reference_record

#: An upstream-shaped P10 file, written by hand (upstream's own files are not ours to copy).
UPSTREAM = {
    "instance_id": "hand_made",
    "suppliers": [
        {"supplier_id": "s_east", "location": "asia", "capacity": 300, "lead_time": 5, "cost_multiplier": 1.0},
        {"supplier_id": "s_west", "location": "europe", "capacity": 200, "lead_time": 3, "cost_multiplier": 1.2},
    ],
    "components": ["gpu_chips", "memory", "fans"],
    "facilities": [
        {"facility_id": "assembly", "location": "usa", "capacity": 150, "cost_per_unit": 90},
        {"facility_id": "testing", "location": "usa", "capacity": 120, "cost_per_unit": 40},
    ],
    "budget": 500000,
    "delivery_deadlines": {"gpu_chips": 6, "memory": 8},
    "dependencies": [["memory", "assembly"], ["testing", "packaging"]],
    "disruption_scenarios": [
        {"type": "resource_shortage", "component": "gpu_chips", "shortage": 0.25},
        {"type": "machine_breakdown", "facility": "assembly", "duration": 2},
    ],
    "description": "hand-made upstream-shaped file",
}


def convert(data, source="hand.json"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = from_upstream_p10(copy.deepcopy(data), source)
    return inst, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


def test_upstream_file_is_read_and_every_fill_reported():
    inst, fills = convert(UPSTREAM)
    assert inst.name == "hand_made" and inst.budget == 500000
    assert [s.lead_time for s in inst.suppliers] == [5, 3]
    assert inst.suppliers[1].capacity == {"gpu_chips": 200, "memory": 200, "fans": 200}
    assert [c.deadline for c in inst.components] == [6, 8, None]
    assert inst.due_day == 10 and inst.demand == 100  # two days after the latest deadline
    assert inst.end_day == 15 and inst.lateness_penalty == 27  # late GPUs until day 15; 5 % of (320 x 1.2 + 155) a day
    assert [c.late_penalty for c in inst.components] == [12, 2, None]  # soft deadlines: 1/20 of the base price
    assert [f.facility_id for f in inst.facilities] == ["assembly", "testing", "packaging"]
    assert inst.facilities[2].capacity == 120  # packaging copies testing's capacity
    assert inst.prices[1][0] == round(250 * 1.2)
    shortage, breakdown = inst.disruptions
    assert isinstance(shortage, Shortage) and shortage.supplier is None and shortage.start == 0
    assert breakdown.start == 3 and breakdown.duration == 2  # when the first order can arrive
    assert all(msg.startswith("hand.json: ") for msg in fills)
    for word in ("facility 'packaging'", "no demand", "bill of materials", "prices", "soft", "penalty for GPUs",
                 "disruption_scenarios[0]", "disruption_scenarios[1]"):
        assert sum(word in msg for msg in fills) == 1, word
    assert len(fills) == 8


def test_upstream_file_through_the_facade_and_the_env_loader(tmp_path):
    path = tmp_path / "p10_instance_x.json"
    path.write_text(json.dumps(UPSTREAM))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        assert load_realm_instance(path) == load_p10(str(path)) == load_instance("P10", str(path))


def test_an_unreachable_deadline_is_reported():
    data = copy.deepcopy(UPSTREAM)
    data["delivery_deadlines"]["gpu_chips"] = 2  # the quickest supplier needs 3 days
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from_upstream_p10(data, "late.json")
    late = [str(w.message) for w in caught if not issubclass(w.category, RealmRepairWarning)]
    assert late == ["late.json: no supplier can deliver gpu_chips by its deadline (day 2; the shortest lead time "
                    "is 3 days): every unit of it arrives late"]


def broken(path_value):
    data = copy.deepcopy(UPSTREAM)
    path, value = path_value
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@pytest.mark.parametrize("change, field", [
    ((("budget",), KeyError), "budget"),
    ((("budget",), "a lot"), "budget"),
    ((("components",), []), "components"),
    ((("components", 1), 7), "components[1]"),
    ((("suppliers", 0, "lead_time"), -1), "suppliers[0].lead_time"),
    ((("suppliers", 1, "capacity"), 2.5), "suppliers[1].capacity"),
    ((("suppliers", 1, "supplier_id"), KeyError), "suppliers[1].supplier_id"),
    ((("facilities", 0, "facility_id"), "painting"), "facilities[0].facility_id"),
    ((("facilities", 1, "cost_per_unit"), None), "facilities[1].cost_per_unit"),
    ((("delivery_deadlines", "cooling"), 3), "delivery_deadlines['cooling']"),
    ((("delivery_deadlines",), [1, 2]), "delivery_deadlines"),
    ((("dependencies", 0), ["memory"]), "dependencies[0]"),
    ((("disruption_scenarios", 0, "type"), "meteor"), "disruption_scenarios[0].type"),
    ((("disruption_scenarios", 0, "shortage"), 1.5), "disruption_scenarios[0].shortage"),
    ((("disruption_scenarios", 1, "facility"), "canteen"), "disruption_scenarios[1].facility"),
])
def test_malformed_upstream_files_name_the_file_and_field(change, field):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InstanceFormatError) as err:
            from_upstream_p10(broken(change), "bad.json")
    assert err.value.source == "bad.json" and err.value.field == field


def test_upstream_shaped_file_missing_its_detection_key(tmp_path):
    data = {k: v for k, v in UPSTREAM.items() if k != "suppliers"}
    path = tmp_path / "half.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceFormatError, match="looks like an upstream REALM-Bench P10 file") as err:
        load_p10(str(path))
    assert err.value.field == "suppliers"


def test_our_own_format_round_trips_and_rejects_bad_fields(tmp_path):
    inst = generate_p10("medium", seed=4)
    path = tmp_path / "mine.json"
    path.write_text(inst.model_dump_json())
    assert load_p10(str(path)) == inst
    data = json.loads(inst.model_dump_json())
    data["facilities"] = list(reversed(data["facilities"]))
    with pytest.raises(InstanceFormatError, match="expected the stages") as err:
        load_p10(data)
    assert err.value.field == "facilities"
    data = json.loads(inst.model_dump_json())
    data["disruptions"][0]["component"] = "unobtainium"
    with pytest.raises(InstanceFormatError) as err:
        load_p10(data)
    assert err.value.field == "disruptions[0].component"


def test_generator_is_seeded_varied_and_sized():
    assert generate_p10("small", 3) == generate_p10("small", 3)
    assert generate_p10("small", 3).fingerprint() != generate_p10("small", 4).fingerprint()
    shapes = {size: generate_p10(size, 0) for size in ("small", "medium", "large")}
    assert [len(i.components) for i in shapes.values()] == sorted(len(i.components) for i in shapes.values())
    assert shapes["small"].demand < shapes["medium"].demand < shapes["large"].demand
    fixed = generate_p10("medium", 9, n_components=2, n_suppliers=3, n_days=9)
    assert (len(fixed.components), len(fixed.suppliers), fixed.due_day + 1) == (2, 3, 9)
    assert fixed.end_day == fixed.due_day + 4 and fixed.lateness_penalty > 0  # late GPUs count, at a cost
    with pytest.raises(ValueError, match="components"):
        generate_p10("small", 0, n_components=9)


def test_shipped_instances_and_their_references():
    names = shipped_p10_names()
    assert names == list_instances("P10")
    assert [sum(n.startswith(f"p10_{s}_") for n in names) for s in ("small", "medium", "large", "late")] == [7, 7, 6, 3]
    for name in names:
        inst = load_p10(name)
        assert inst == generate_p10(inst.size, int(name[-2:]), name=name)  # the build's recipe
        ref = reference_p10(inst)
        assert ref.source == "shipped" and ref.workers == 1
        # the best plan known: the optimum with foresight, proven; the adaptive oracle beside it
        assert ref.status == "OPTIMAL" and ref.bound == ref.value and ref.extra["shortfall"] == 0
        assert ref.extra["adaptive_status"] == "ADAPTIVE_OPTIMAL" and ref.extra["adaptive_value"] >= ref.value
    assert sum(Path(p).stat().st_size for p in (Path(load_p10.__code__.co_filename).parent / "instances").iterdir()) \
        < 400_000


@pytest.mark.parametrize("name", ["p10_small_00", "p10_medium_03"])
def test_a_rebuild_gives_the_shipped_reference(name):
    # CP-SAT ties are broken in the model, so every OR-Tools version plans alike
    stored = reference_p10(load_p10(name))
    rebuilt = reference_record(load_p10(name))
    assert (rebuilt["value"], rebuilt["status"], rebuilt["plan"]) == (stored.value, stored.status, stored.plan)


def test_generated_instances_can_deliver_everything_with_foresight():
    from crab_gym.envs.realm.supply_chain.oracle import solve_from
    from crab_gym.envs.realm.supply_chain.sim import SupplySim

    for size in ("small", "medium", "large"):
        for seed in range(3):
            inst = generate_p10(size, 100 + seed)
            sol = solve_from(SupplySim(inst, []), known=list(inst.disruptions))
            packaged = sum(q for k, _, q in sol.runs if k == 2)
            assert sol.status == "OPTIMAL" and packaged == inst.demand, (size, seed)


UPSTREAM_DIR = os.environ.get("CRAB_GYM_REALM_DIR")


@pytest.mark.skipif(not UPSTREAM_DIR, reason="set CRAB_GYM_REALM_DIR to an upstream REALM-Bench datasets folder")
def test_every_upstream_p10_file_loads():
    files = sorted((Path(UPSTREAM_DIR) / "P10" / "custom").glob("*.json"))
    assert len(files) == 100
    for path in files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            inst = load_realm_instance(path)
        assert isinstance(inst, P10Instance)
        fills = [w for w in caught if issubclass(w.category, RealmRepairWarning)]
        assert len(fills) == 8, path.name  # seven fills and the penalty for GPUs not delivered
