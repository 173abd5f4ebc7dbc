"""The shipped J3 references: each plan, read by the independent checker, gives its value,
and every value is certified optimal or within 1 % of its proven bound."""

from __future__ import annotations

import json

import pytest

from crab_gym.envs.realm.jobshop.variants.build import REFERENCES, instances
from crab_gym.envs.realm.jobshop.variants.checker import check

J3 = instances("J3")
RECORDS = json.loads(REFERENCES.read_text(encoding="utf-8"))


@pytest.mark.parametrize("inst", J3, ids=[i.name for i in J3])
def test_each_shipped_j3_reference_is_its_plans_cost_and_within_one_percent_of_its_bound(inst):
    record = RECORDS[inst.name]
    assert record["fingerprint"] == inst.fingerprint()
    assert check(inst, record["plan"]).cost == record["value"]
    assert record["value"] >= record["bound"] >= inst.trivial_lower_bound()
    assert (record["status"] == "OPTIMAL") == (record["value"] == record["bound"])
    assert record["value"] <= 1.01 * record["bound"], f"{inst.name}: {record['value']} vs bound {record['bound']}"
    assert record["workers"] in (0, 1) and record["time_limit_s"] >= 0  # the budget is recorded
