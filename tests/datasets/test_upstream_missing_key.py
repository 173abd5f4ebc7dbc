"""Issue 38, item 6: an upstream P file without the one key that tells its problem (P5/P8's
``travel_times``, P7's ``resources``, P10's ``delivery_deadlines``) was read by the
problem's loader as crab_gym's own format and refused with ``field 'name': Field required``,
a key upstream files never have. Its ``instance_id`` marks it as upstream's: the error names
the key it lacks. And a list or an object where a name is expected (a pickup, a flight, a
severity) raised a bare ``TypeError: unhashable type``; it is now named like any bad value."""

from __future__ import annotations

import copy
import json

import pytest

import crab_gym  # noqa: F401  (registers the env ids)
from crab_gym.datasets import InstanceFormatError, load_instance, load_realm_instance
from tests.disaster_relief.test_formats import UPSTREAM as P7_UPSTREAM
from tests.ridesharing.upstream_files import p3_mapping, p4_mapping
from tests.supply_chain.test_formats import UPSTREAM as P10_UPSTREAM
from tests.thanksgiving.conftest import UPSTREAM_P6, upstream_p9
from tests.wedding.upstream_files import p5_mapping, p8_mapping


@pytest.mark.parametrize(("problem", "data", "key"), [
    ("P5", p5_mapping(), "travel_times"),
    ("P8", p8_mapping(), "travel_times"),
    ("P7", P7_UPSTREAM, "resources"),
    ("P10", P10_UPSTREAM, "delivery_deadlines"),
])
def test_an_upstream_file_without_its_telling_key_names_that_key(tmp_path, problem, data, key):
    bad = {k: v for k, v in copy.deepcopy(data).items() if k != key}
    path = tmp_path / f"{problem}_without_{key}.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InstanceFormatError) as err:
        load_instance(problem, str(path))
    assert err.value.field == key, str(err.value)
    assert f"{path.name}: field '{key}': missing required key" in str(err.value)
    assert f"upstream REALM-Bench {problem} file" in str(err.value)


@pytest.mark.parametrize(("data", "path"), [
    (p3_mapping(), ("ride_requests", 0, "pickup")),
    (p4_mapping(), ("vehicles", 0, "location")),
    (UPSTREAM_P6, ("family_members", 1, "flight")),
    (upstream_p9(), ("disruptions", 0, "flight")),
    (P7_UPSTREAM, ("regions", 0, "severity")),
    (P7_UPSTREAM, ("disruption_scenarios", 1, "resource")),
])
@pytest.mark.parametrize("value", [[], {}])
def test_a_list_or_object_where_a_name_belongs_is_named(tmp_path, data, path, value):
    bad = copy.deepcopy(data)
    node = bad
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    file = tmp_path / "odd.json"
    file.write_text(json.dumps(bad))
    with pytest.raises(InstanceFormatError) as err:
        load_realm_instance(file)
    field = f"{path[0]}[{path[1]}].{path[2]}"
    assert err.value.field == field and str(err.value).startswith(f"odd.json: field '{field}'")
