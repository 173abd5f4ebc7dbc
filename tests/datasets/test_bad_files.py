"""Bad instance files: each is an InstanceFormatError naming the file and the field.

Every bad file is written into ``tmp_path`` and read through the public loaders (and, for a
few, through ``gym.make(..., instance=path)`` and ``reset(options={"instance": path})``).
Never a bare ``UnicodeDecodeError``/``RecursionError``/``OverflowError``/``ValueError``, and
never silent acceptance of a value that is wrong.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401  (registers the env ids)
from crab_gym.datasets import InstanceFormatError, RealmRepairWarning, load_realm_instance
from crab_gym.datasets.jssp import list_jssp_instances, load_jssp_instance
from crab_gym.envs.realm.campus_tour.formats import load_p1, shipped_p1_names
from crab_gym.envs.realm.campus_tour.generator import generate_p1
from crab_gym.envs.realm.group_tours.formats import load_p2, shipped_p2_names
from crab_gym.envs.realm.group_tours.generator import generate_p2
from crab_gym.envs.realm.ridesharing.formats import load_p3, load_p4, shipped_p3_names, shipped_p4_names
from crab_gym.envs.realm.ridesharing.generator import generate_p3, generate_p4


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


# ----------------------------------------------------------------------------- files
def up_p1() -> dict:
    """A small file in upstream REALM-Bench's P1 shape (hours, "a-b" distances)."""
    locs = ["entrance", "library", "gym"]
    return {
        "locations": locs,
        "start_location": "entrance",
        "distances": {f"{a}-{b}": 5 + i + j for i, a in enumerate(locs) for j, b in enumerate(locs) if a != b},
        "time_windows": {"entrance": [8, 18], "library": [9, 17], "gym": [10, 16]},
        "max_duration": 180,
    }


def up_p2() -> dict:
    return {
        "visitor_groups": [
            {"group_id": "g1", "size": 10, "preferred_time": 9.5, "arrival_time": 9},
            {"group_id": "g2", "size": 8, "preferred_time": 10, "arrival_time": 10},
        ],
        "tour_guides": [
            {"guide_id": "a", "availability": [9, 13], "max_group_size": 15},
            {"guide_id": "b", "availability": [10, 17], "max_group_size": 12},
        ],
        "tour_duration": 60,
        "max_group_size": 15,
    }


def up_p3() -> dict:
    places = ["depot", "museum", "harbor"]
    return {
        "city_map": {
            "locations": places,
            "distances": {f"{a}-{b}": 10 for a in places for b in places if a != b},
        },
        "ride_requests": [
            {"passenger_id": "ann", "pickup": "museum", "dropoff": "harbor", "time_window": [9, 9.5], "deadline": 30},
            {"passenger_id": "bob", "pickup": "harbor", "dropoff": "depot", "time_window": [10, 10.5], "deadline": 30},
        ],
        "vehicles": [{"vehicle_id": "v1", "location": "depot", "capacity": 2, "fuel": 80}],
    }


def up_p4() -> dict:
    data = up_p3()
    data["disruptions"] = [
        {"type": "traffic_delay", "route": "depot-museum", "delay": 10, "start_time": 9, "duration": 60},
    ]
    return data


def own(generate: Callable[..., Any]) -> dict:
    """crab_gym's own JSON form of a small generated instance."""
    return json.loads(generate("small", 0).to_json())


def p11() -> dict:
    """2 jobs x 2 machines; trivial lower bound 6 (machine 1 carries 2 + 4)."""
    return {"name": "tiny", "jobs": 2, "machines": 2, "ops": [[0, 3, 1, 2], [1, 4, 0, 1]]}


P11_TRIVIAL_LB = 6

LOADERS: dict[str, Callable[[Any], Any]] = {
    "P1": load_p1,
    "P2": load_p2,
    "P3": load_p3,
    "P4": load_p4,
    "P11": load_jssp_instance,
    "upstream": load_realm_instance,
}


def write(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


def bad_file(
    load: Callable[[Any], Any], path: Path, field: str | None, *, line: int | None = None
) -> InstanceFormatError:
    """Load ``path``; assert an InstanceFormatError naming the file and ``field`` (and line)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RealmRepairWarning)
        with pytest.raises(InstanceFormatError) as err:
            load(path)
    exc, text = err.value, str(err.value)
    assert exc.source == path.name, text
    assert text.startswith(path.name), text
    if field is not None:
        assert exc.field == field, text
        assert f"field '{field}'" in text
    if line is not None:
        assert exc.line == line, text
        assert f"line {line}" in text
    assert "\n" not in text and len(text) < 400, text  # one readable sentence
    return exc


def mutated(data: dict, path: str, value: Any) -> dict:
    """A deep copy of ``data`` with the item at a dotted path (``a.b[2][0]``) set to ``value``."""
    out = copy.deepcopy(data)
    parts: list[Any] = []
    for name, index, key in re.findall(r"\.?([A-Za-z_]\w*)|\[(\d+)\]|\['([^']*)'\]", path):
        parts.append(name or (int(index) if index else key))
    node = out
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value
    return out


def removed(data: dict, key: str) -> dict:
    out = copy.deepcopy(data)
    del out[key]
    return out


# ----------------------------------------------------------------------------- non-UTF-8
@pytest.mark.parametrize(
    "problem, data, text, field",
    [
        ("P1", lambda: own(generate_p1), '"entrance"', "locations[0]"),
        ("P2", up_p2, '"g2"', "visitor_groups[1].group_id"),
        ("P3", up_p3, '"bob"', "ride_requests[1].passenger_id"),
        ("P4", lambda: own(generate_p4), '"v1"', "vehicles[0].vehicle_id"),
        ("upstream", up_p4, '"ann"', "ride_requests[0].passenger_id"),
        ("P11", p11, '"tiny"', "name"),
    ],
)
def test_non_utf8_bytes_name_file_and_field(tmp_path, problem, data, text, field):
    raw = json.dumps(data()).encode()
    assert text.encode() in raw
    raw = raw.replace(text.encode(), text.encode()[:-1] + b"\xe9\xff" + b'"', 1)  # Latin-1 bytes in a string
    exc = bad_file(LOADERS[problem], write(tmp_path, "latin1.json", raw), field, line=1)
    assert "not UTF-8" in exc.problem and "0xe9" in exc.problem


def test_non_utf8_bytes_in_a_jssp_text_file_name_the_line(tmp_path):
    path = write(tmp_path, "ft_latin1.txt", b"2 2\n0 3 1 2\n1 4 0 1 \xb5\n")
    exc = bad_file(load_jssp_instance, path, None, line=3)
    assert "not UTF-8" in str(exc)


def test_a_byte_order_mark_is_not_an_error(tmp_path):
    path = write(tmp_path, "bom.json", b"\xef\xbb\xbf" + json.dumps(p11()).encode())
    assert load_jssp_instance(path).trivial_lower_bound() == P11_TRIVIAL_LB
    path = write(tmp_path, "bom_p3.json", b"\xef\xbb\xbf" + json.dumps(up_p3()).encode())
    assert load_p3(path).n_requests == 2


def test_json_syntax_errors_name_line_and_field(tmp_path):
    bad_file(load_p3, write(tmp_path, "syntax.json", '{"city_map": {"locations": ["a",\n  "b",, "c"]}}'),
             "city_map.locations[2]", line=2)
    bad_file(load_jssp_instance, write(tmp_path, "syntax11.json", '{"jobs": 1 "ops": []}'), "jobs", line=1)


# ----------------------------------------------------------------------------- deep nesting
@pytest.mark.parametrize("depth", [5000, 100])  # beyond Python's recursion limit, and below it
@pytest.mark.parametrize(
    "problem, head, tail, field_prefix",
    [
        ("P1", '{"name": "x", "locations": ', "}", "locations[0][0]"),
        ("P2", '{"visitor_groups": [{"size": ', "}]}", "visitor_groups[0].size[0]"),
        ("P3", '{"city_map": {"locations": ', "}}", "city_map.locations[0]"),
        ("P4", '{"disruptions": ', "}", "disruptions[0][0]"),
        ("upstream", '{"ride_requests": ', "}", "ride_requests[0]"),
        ("P11", '{"jobs": 1, "machines": 1, "ops": ', "}", "ops[0][0]"),
    ],
)
def test_deep_nesting_names_file_and_field(tmp_path, depth, problem, head, tail, field_prefix):
    path = write(tmp_path, "deep.json", head + "[" * depth + "]" * depth + tail)
    exc = bad_file(LOADERS[problem], path, None)
    assert exc.field is not None and exc.field.startswith(field_prefix), str(exc)
    assert "nested more than" in exc.problem


# ----------------------------------------------------------------------------- huge numbers
HUGE = 10**30


@pytest.mark.parametrize(
    "problem, data, field, value",
    [
        ("P1", lambda: own(generate_p1), "travel[1][2]", HUGE),
        ("P1", lambda: own(generate_p1), "windows[0][1]", HUGE),
        ("P1", lambda: own(generate_p1), "coords[1][0]", 1e30),
        ("P1", up_p1, "distances['entrance-gym']", HUGE),
        ("P1", up_p1, "max_duration", HUGE),
        ("P2", up_p2, "tour_duration", HUGE),
        ("P2", up_p2, "visitor_groups[0].size", HUGE),
        ("P2", lambda: own(generate_p2), "guides[0].max_group_size", HUGE),
        ("P3", up_p3, "vehicles[0].capacity", HUGE),
        ("P3", up_p3, "ride_requests[0].deadline", HUGE),
        ("P3", lambda: own(generate_p3), "start_time", HUGE),
        ("P3", lambda: own(generate_p3), "coords[0][1]", -1e30),
        ("P4", up_p4, "disruptions[0].duration", HUGE),
        ("P4", lambda: own(generate_p4), "disruptions[0].start", HUGE),
        ("P11", p11, "ops[1][1]", HUGE),
        ("P11", p11, "optimum", HUGE),
        ("P11", p11, "machines", HUGE),
    ],
)
def test_huge_numbers_name_file_and_field(tmp_path, problem, data, field, value):
    path = write(tmp_path, "huge.json", mutated(data(), field, value))
    exc = bad_file(LOADERS[problem], path, field)
    assert "too large" in exc.problem, str(exc)


@pytest.mark.parametrize(
    "problem, data, field",
    [
        ("P1", lambda: own(generate_p1), "travel[1][2]"),
        ("P2", lambda: own(generate_p2), "tour_duration"),
        ("P3", lambda: own(generate_p3), "roads[0][1]"),
        ("P3", up_p3, "city_map.distances['depot-museum']"),
        ("P4", lambda: own(generate_p4), "disruptions[0].duration"),
        ("P11", p11, "ops[0][1]"),
        ("P11", p11, "upper_bound"),
    ],
)
def test_numbers_beyond_the_field_limit_name_file_and_field(tmp_path, problem, data, field):
    """10^12 is a valid JSON number but no time, duration or bound: the model's limit (10^9)."""
    path = write(tmp_path, "big.json", mutated(data(), field, 10**12))
    exc = bad_file(LOADERS[problem], path, field)
    assert "1000000000" in exc.problem, str(exc)


def test_huge_numbers_in_mappings_name_the_field():
    for load, data, field in (
        (load_p1, own(generate_p1), "travel[1][2]"),
        (load_p3, up_p3(), "vehicles[0].capacity"),
        (load_p4, own(generate_p4), "disruptions[0].delay"),
    ):
        with pytest.raises(InstanceFormatError) as err:
            load(mutated(data, field, HUGE))
        assert err.value.source == "<mapping>" and err.value.field == field, str(err.value)


def test_huge_numbers_in_jssp_text_files_name_the_line(tmp_path):
    bad_file(load_jssp_instance, write(tmp_path, "huge.txt", f"2 2\n0 3 1 2\n1 {HUGE} 0 1\n"), None, line=3)
    bad_file(load_jssp_instance, write(tmp_path, "big.txt", "2 2\n0 3 1 2\n1 2000000000 0 1\n"), None, line=3)
    digits = "9" * 5000  # Python refuses int() of more than 4300 digits with a bare ValueError
    bad_file(load_jssp_instance, write(tmp_path, "digits.txt", f"2 2\n0 3 1 2\n1 {digits} 0 1\n"), None, line=3)


def test_nan_and_infinity_literals_name_file_and_field(tmp_path):
    text = json.dumps(own(generate_p1)).replace('"max_travel": ', '"max_travel": NaN, "x": ')
    bad_file(load_p1, write(tmp_path, "nan.json", text), "max_travel")
    text = json.dumps(p11()).replace('"machines": 2', '"machines": Infinity')
    bad_file(load_jssp_instance, write(tmp_path, "inf.json", text), "machines")
    digits = "9" * 5000
    text = json.dumps(up_p3()).replace('"capacity": 2', f'"capacity": {digits}')
    bad_file(load_realm_instance, write(tmp_path, "digits.json", text), "vehicles[0].capacity")


# ----------------------------------------------------------------------------- P11 types
@pytest.mark.parametrize(
    "field, value, words",
    [
        ("machines", "x", "whole number"),
        ("machines", 2.5, "whole number"),
        ("jobs", "2", "whole number"),
        ("jobs", None, "whole number"),
        ("ops", {"0": [0, 3]}, "list of job rows"),
        ("ops", [[0, 3, 1, 2]], "expected 2 job rows"),
        ("ops[0]", "0 3 1 2", "machine, duration pairs"),
        ("ops[0]", [0, 3, 1], "machine, duration pairs"),
        ("ops[0][1]", "3", "not an integer"),
        ("ops[0][3]", None, "not an integer"),
        ("ops[1][1]", 2.5, "not an integer"),
        ("ops[1][1]", -4, "negative duration"),
        ("ops[0][2]", 5, "machine 5 outside 0..1"),
        ("ops[1][0]", True, "not an integer"),
        ("optimum", "55", "whole number"),
        ("upper_bound", [9], "whole number"),
        ("time_seed", "x", "whole number"),
        ("machine_seed", 0, "whole number"),
        ("name", 5, "expected text"),
        ("citation", {"doi": 1}, "expected text"),
    ],
)
def test_p11_fields_of_the_wrong_type_name_file_and_field(tmp_path, field, value, words):
    path = write(tmp_path, "jssp_types.json", mutated(p11(), field, value))
    exc = bad_file(load_jssp_instance, path, field)
    assert words in exc.problem, str(exc)
    assert "tiny" not in str(exc)  # the file is named, not the instance inside it


def test_p11_missing_and_unknown_keys_name_file_and_field(tmp_path):
    bad_file(load_jssp_instance, write(tmp_path, "nojobs.json", removed(p11(), "jobs")), "jobs")
    bad_file(load_jssp_instance, write(tmp_path, "extra.json", {**p11(), "optimal": 7}), "optimal")


# ----------------------------------------------------------------------------- P3/P4 requests, ids
@pytest.mark.parametrize(
    "problem, data, field",
    [
        ("P3", up_p3, "ride_requests"),
        ("P4", up_p4, "ride_requests"),
        ("upstream", up_p4, "ride_requests"),
        ("P3", lambda: own(generate_p3), "requests"),
        ("P4", lambda: own(generate_p4), "requests"),
    ],
)
def test_ride_sharing_files_without_requests_name_file_and_field(tmp_path, problem, data, field):
    exc = bad_file(LOADERS[problem], write(tmp_path, "no_requests.json", mutated(data(), field, [])), field)
    assert "at least" in exc.problem


@pytest.mark.parametrize(
    "problem, data, field, value",
    [
        ("P3", up_p3, "ride_requests[1].passenger_id", "bob smith"),
        ("P4", up_p4, "vehicles[0].vehicle_id", "van 1"),
        ("upstream", up_p3, "ride_requests[0].passenger_id", "ann\t"),
        ("P3", lambda: own(generate_p3), "requests[0].passenger_id", "p 1"),
        ("P4", lambda: own(generate_p4), "vehicles[1].vehicle_id", "v 2"),
        ("P3", up_p3, "vehicles[0].vehicle_id", "1st-van"),  # names a field of submit_plan
    ],
)
def test_ride_sharing_ids_with_spaces_name_file_and_field(tmp_path, problem, data, field, value):
    exc = bad_file(LOADERS[problem], write(tmp_path, "ids.json", mutated(data(), field, value)), field)
    assert repr(value) in exc.problem


# ----------------------------------------------------------------------------- detection keys
@pytest.mark.parametrize(
    "problem, data, key",
    [
        ("P1", up_p1, "distances"),
        ("P1", up_p1, "time_windows"),
        ("upstream", up_p1, "distances"),
        ("P2", up_p2, "visitor_groups"),
        ("upstream", up_p2, "tour_guides"),
        ("P3", up_p3, "city_map"),
        ("P3", up_p3, "ride_requests"),
        ("upstream", up_p3, "city_map"),
        ("P4", up_p4, "city_map"),
        ("P4", up_p4, "ride_requests"),
        ("upstream", up_p4, "ride_requests"),
    ],
)
def test_upstream_file_missing_a_detection_key_names_that_key(tmp_path, problem, data, key):
    exc = bad_file(LOADERS[problem], write(tmp_path, "partial.json", removed(data(), key)), key)
    assert "missing required key" in exc.problem and "upstream REALM-Bench" in exc.problem
    assert "'name'" not in str(exc)  # not a complaint about crab_gym's own format


def test_an_upstream_file_of_another_problem_is_named(tmp_path):
    path = write(tmp_path, "groups.json", up_p2())
    with pytest.raises(InstanceFormatError, match="groups.json: this is a REALM-Bench P2 file, not a campus tour"):
        load_p1(path)


# ----------------------------------------------------------------------------- wrong values
@pytest.mark.parametrize(
    "field, value, words",
    [
        ("optimum", -5, "whole number in [1,"),
        ("optimum", 0, "whole number in [1,"),
        ("optimum", 7.5, "whole number"),
        ("optimum", P11_TRIVIAL_LB - 1, "below the instance's trivial lower bound 6"),
        ("upper_bound", P11_TRIVIAL_LB - 1, "below the instance's trivial lower bound 6"),
        ("upper_bound", -1, "whole number in [1,"),
        ("lower_bound", 0, "whole number in [1,"),
        ("lower_bound", 2.5, "whole number"),
    ],
)
def test_p11_wrong_bounds_name_file_and_field(tmp_path, field, value, words):
    exc = bad_file(load_jssp_instance, write(tmp_path, "bounds.json", {**p11(), field: value}), field)
    assert words in exc.problem, str(exc)


def test_p11_right_bounds_still_load(tmp_path):
    inst = load_jssp_instance(write(tmp_path, "ok.json", {**p11(), "optimum": 7, "lower_bound": 2}))
    assert inst.reference == (7, "optimum") and inst.trivial_lower_bound() == P11_TRIVIAL_LB


def test_p11_taillard_bound_below_the_trivial_bound_names_file_line_and_field(tmp_path):
    text = (
        "Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound\n"
        "2 2 0 0 5 5\nTimes\n3 4\n2 5\nMachines\n1 2\n2 1\n"
    )
    exc = bad_file(load_jssp_instance, write(tmp_path, "tai.txt", text), "optimum", line=2)
    assert "trivial lower bound 8" in exc.problem


@pytest.mark.parametrize(
    "problem, data, field, value, words",
    [
        ("P1", lambda: own(generate_p1), "windows[2][0]", -30, "greater than or equal to 0"),
        ("P1", lambda: own(generate_p1), "windows[2]", [700, 600], "open <= close"),
        ("P1", lambda: own(generate_p1), "travel[2][3]", -4, "greater than or equal to 0"),
        ("P1", lambda: own(generate_p1), "max_travel", -1, "greater than or equal to 0"),
        ("P1", up_p1, "time_windows['gym'][0]", -1, "[0, 48]"),
        ("P1", up_p1, "distances['gym-library']", -2, "minutes in [0,"),
        ("P2", lambda: own(generate_p2), "groups[1].arrival", -5, "greater than or equal to 0"),
        ("P2", lambda: own(generate_p2), "guides[0].available_to", 100, "before it starts"),
        ("P2", lambda: own(generate_p2), "tour_duration", 0, "greater than or equal to 1"),
        ("P2", up_p2, "visitor_groups[0].arrival_time", -9, "[0, 48]"),
        ("P3", lambda: own(generate_p3), "requests[0].pickup_window", [600, 500], "before it opens"),
        ("P3", lambda: own(generate_p3), "requests[0].pickup_window[0]", -10, "greater than or equal to 0"),
        ("P3", lambda: own(generate_p3), "requests[1].latest_dropoff", -1, "greater than or equal to 0"),
        ("P3", lambda: own(generate_p3), "vehicles[0].capacity", 0, "greater than or equal to 1"),
        ("P3", up_p3, "ride_requests[0].time_window", [11, 9], "cannot be repaired"),
        ("P3", up_p3, "ride_requests[0].deadline", -5, "[0,"),
        ("P4", lambda: own(generate_p4), "disruptions[0].duration", -30, "greater than or equal to 0"),
        ("P4", up_p4, "disruptions[0].delay", -3, "[0,"),
    ],
)
def test_negative_times_and_inverted_windows_name_file_and_field(tmp_path, problem, data, field, value, words):
    exc = bad_file(LOADERS[problem], write(tmp_path, "wrong.json", mutated(data(), field, value)), field)
    assert words in exc.problem, str(exc)


def test_documented_upstream_repairs_still_apply(tmp_path):
    """An inverted upstream P3 window one hour off is repaired (and reported), not rejected."""
    data = mutated(up_p3(), "ride_requests[0].time_window", [9.75, 9 + 25 / 60])
    with pytest.warns(RealmRepairWarning, match="moved its start back one hour"):
        inst = load_p3(write(tmp_path, "repairable.json", data))
    assert inst.requests[0].pickup_window == (525, 565)


# ----------------------------------------------------------------------------- env entry points
def test_envs_check_instance_paths_the_same_way(tmp_path):
    bad_opt = write(tmp_path, "neg_opt.json", {**p11(), "optimum": -5})
    with pytest.raises(InstanceFormatError, match=r"neg_opt.json: field 'optimum'"):
        gym.make("Realm-P11-v0", instance=str(bad_opt))
    env = gym.make("Realm-P11-v0", instance=str(write(tmp_path, "ok.json", p11())))
    try:
        env.reset(seed=0)
        with pytest.raises(InstanceFormatError, match=r"neg_opt.json: field 'optimum'"):
            env.reset(options={"instance": str(bad_opt)})
    finally:
        env.close()

    neg_window = write(tmp_path, "neg_window.json", mutated(own(generate_p1), "windows[1][0]", -30))
    with pytest.raises(InstanceFormatError, match=r"neg_window.json: field 'windows\[1\]\[0\]'"):
        gym.make("Realm-P1-v0", instance=str(neg_window))
    no_requests = write(tmp_path, "empty.json", mutated(up_p3(), "ride_requests", []))
    with pytest.raises(InstanceFormatError, match=r"empty.json: field 'ride_requests'"):
        gym.make("Realm-P3-v0", instance=str(no_requests))
    latin1 = write(tmp_path, "latin1.json", json.dumps(up_p4()).encode().replace(b'"bob"', b'"b\xf6b"'))
    with pytest.raises(InstanceFormatError, match=r"latin1.json, line 1: field 'ride_requests\[1\].passenger_id'"):
        gym.make("Realm-P4-v0", instance=str(latin1))


# ----------------------------------------------------------------------------- good files
def test_shipped_instances_still_load(tmp_path):
    for names, load in (
        (shipped_p1_names(), load_p1),
        (shipped_p2_names(), load_p2),
        (shipped_p3_names(), load_p3),
        (shipped_p4_names(), load_p4),
    ):
        assert len(names) == 20
        for name in names:
            inst = load(name)
            path = write(tmp_path, f"{name}.json", inst.to_json())
            assert load(path) == inst  # our own format round-trips through a file
    names = list_jssp_instances()
    assert len(names) == 162
    for name in names:
        inst = load_jssp_instance(name)
        ref, _ = inst.reference
        assert ref >= inst.trivial_lower_bound() >= 1
    ft06 = load_jssp_instance("ft06")
    assert load_jssp_instance(write(tmp_path, "ft06.json", ft06.to_dict())) == ft06


def test_good_upstream_files_still_load(tmp_path):
    for data, expect in ((up_p1, "P1Instance"), (up_p2, "P2Instance"), (up_p3, "P3Instance"), (up_p4, "P4Instance")):
        inst = load_realm_instance(write(tmp_path, "good.json", data()))
        assert type(inst).__name__ == expect


# ----------------------------------------------------------------------------- a required key missing
def _own_json(problem: str) -> dict:
    """A shipped instance of ``problem`` in crab_gym's own JSON shape."""
    from crab_gym.datasets import list_instances, load_instance

    return json.loads(load_instance(problem, list_instances(problem)[0]).model_dump_json())


@pytest.mark.parametrize("problem", ["P1", "P2", "P3", "P5", "P6", "P7", "P10"])
def test_a_missing_required_key_is_named_with_the_file(tmp_path, problem):
    """Issue 28: "Field required" named the file but not the field, for every required key."""
    from crab_gym.datasets import load_instance

    data = _own_json(problem)
    checked = 0
    for key in data:
        bad = {k: v for k, v in data.items() if k != key}
        path = tmp_path / f"{problem}_without_{key}.json"
        path.write_text(json.dumps(bad))
        try:
            load_instance(problem, str(path))
        except InstanceFormatError as exc:
            assert exc.field == key and f"{path.name}: field '{key}': Field required" in str(exc), str(exc)
            checked += 1
    assert checked >= 3, f"{problem}: expected several required keys"
