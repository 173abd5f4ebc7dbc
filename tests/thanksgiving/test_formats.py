"""Reading instances: our own JSON, upstream-shaped P6/P9 mappings (defaults and repairs, each
reported), malformed input (an InstanceFormatError naming the file and the field), and the
opt-in check of a user's whole upstream copy (``CRAB_GYM_REALM_DIR``)."""

from __future__ import annotations

import copy
import json
import os
import warnings
from pathlib import Path

import pytest

from crab_gym.datasets import load_realm_instance
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.thanksgiving.formats import load_p6, load_p9
from tests.thanksgiving.conftest import TINY, UPSTREAM_P6, upstream_p9


def _repairs(load, data) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load(data)
    return inst, [str(w.message) for w in caught if issubclass(w.category, RealmRepairWarning)]


def test_upstream_p6_defaults_and_repairs_are_each_reported():
    inst, repairs = _repairs(load_p6, copy.deepcopy(UPSTREAM_P6))
    assert inst.name == "handmade_p6" and inst.start_time == 720 and inst.deadline == 18 * 60 + 30
    assert [(t.task_id, t.duration, t.oven) for t in inst.tasks] == [
        ("turkey", 180, True), ("pie", 30, False), ("gravy", 20, False), ("rolls", 30, False)
    ]
    assert inst.dependencies == [("turkey", "gravy")]  # the pair naming a non-task is dropped
    assert inst.kitchen_capacity == 2  # max_cooks 2 caps kitchen_capacity 3
    assert inst.members[1].flight == "ua1" and inst.flight_arrival["ua1"] == 13 * 60 + 10
    assert all("rolls" in m.skills for m in inst.members)  # nobody could cook rolls
    assert [c.start for c in inst.cars] == ["home", "airport"] and inst.cars[0].seats == 3
    expected = ("no cooking durations", "max_cooks 2 is below kitchen_capacity 3",
                "no family member has the skill to cook 'rolls'", "no travel times",
                "cooking_dependencies[1] ['pie', 'whipped_cream'] names 'whipped_cream'")
    assert len(repairs) == len(expected)
    for text, repair in zip(expected, repairs):
        assert repair.startswith("<mapping>: ") and text in repair


def test_upstream_p9_recomputes_the_new_arrival_from_the_delay():
    inst, repairs = _repairs(load_p9, upstream_p9())
    (delay,) = inst.delays
    assert (delay.flight, delay.delay, delay.announced) == ("ua1", 35, 13 * 60 + 10 - 60)
    assert inst.landing("bob", inst.delays) == 13 * 60 + 45
    assert any("new_arrival_time '13:35' is not the scheduled arrival plus 35 min; recomputed as 13:45" in r
               for r in repairs)
    correct = upstream_p9()
    correct["disruptions"][0]["new_arrival_time"] = "13:45"
    assert not any("recomputed" in r for r in _repairs(load_p9, correct)[1])


def test_problem_detection_and_the_facade(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(upstream_p9()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        assert load_realm_instance(path).delays  # dispatched to the P9 reader
        with pytest.raises(InstanceFormatError, match="this is a REALM-Bench P9 file, not a Thanksgiving dinner \\(P6\\)"):
            load_p6(upstream_p9())


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (lambda d: d.pop("family_members"), "family_members", "no 'family_members'"),
        (lambda d: d["flights"]["ua1"].update(arrival_time="25h"), "flights.ua1.arrival_time", "expected a clock time"),
        (lambda d: d["family_members"][1].update(flight="zz9"), "family_members[1].flight", "unknown flight 'zz9'"),
        (lambda d: d["family_members"][0].update(skills=["carving"]), "family_members[0].skills[0]", "'carving' is not"),
        (lambda d: d["vehicles"][0].update(capacity=0), "vehicles[0].capacity", "expected a whole number >= 1"),
        (lambda d: d["vehicles"][1].update(location="garage"), "vehicles[1].location", "expected 'home' or 'airport'"),
        (lambda d: d["constraints"].update(dinner_deadline=18), "constraints.dinner_deadline", "expected a clock time"),
        (lambda d: d["disruptions"][0].update(delay=-5), "disruptions[0].delay", "expected a whole number >= 0"),
        (lambda d: d["disruptions"][0].update(type="meteor"), "disruptions[0].type", "unknown disruption type"),
    ],
)
def test_malformed_upstream_files_name_the_file_and_the_field(tmp_path, change, field, words):
    data = upstream_p9()
    change(data)
    path = tmp_path / "broken_p9.json"
    path.write_text(json.dumps(data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        with pytest.raises(InstanceFormatError) as err:
            load_p9(str(path))
    assert err.value.source == "broken_p9.json" and err.value.field == field and words in str(err.value)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (lambda d: d["members"][0]["skills"].append("soup"), "members[0].skills[2]", "'soup' is not a task"),
        (lambda d: d["dependencies"].append(["gravy", "turkey"]), "dependencies", "cycle"),
        (lambda d: d["members"][1].update(flight="f9"), "members[1].flight", "'f9' is not a flight"),
        (lambda d: d["tasks"][1].update(duration=0), "tasks[1].duration", "greater than or equal to 1"),
        (lambda d: d["members"][1].update(skills=[]), "tasks[1]", "no member has the skill to cook 'gravy'"),
        (lambda d: d.update(deadline=500), "deadline", "not after start_time"),
    ],
)
def test_malformed_own_files_name_the_field(tmp_path, change, field, words):
    data = copy.deepcopy(TINY)
    change(data)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceFormatError) as err:
        load_p6(str(path))
    assert err.value.source == "mine.json" and err.value.field == field and words in str(err.value)


REALM_DIR = os.environ.get("CRAB_GYM_REALM_DIR")


@pytest.mark.skipif(not REALM_DIR, reason="set CRAB_GYM_REALM_DIR to an upstream REALM-Bench datasets folder")
@pytest.mark.parametrize(("folder", "load"), [("P6/custom", load_p6), ("P9/disruptions", load_p9)])
def test_every_upstream_file_loads_with_its_repairs_reported(folder, load):
    files = sorted(Path(REALM_DIR, folder).glob("*.json"))
    assert files, f"no files under {REALM_DIR}/{folder}"
    for path in files:
        inst, repairs = _repairs(load, str(path))
        assert inst.tasks and inst.travellers and all(r.startswith(path.name) for r in repairs)
        assert any("no cooking durations" in r for r in repairs) and any("no travel times" in r for r in repairs)
        if folder.startswith("P9"):
            assert inst.delays
