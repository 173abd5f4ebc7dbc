"""The shipped J3 references: each plan, read by the independent checker, gives its value,
and every value is certified optimal or within 1 % of its proven bound. The shipped J2
references (small, medium and large 200 x 50): each plan gives its value, no worse than any
run the record keeps, with CP-SAT's status and budget recorded."""

from __future__ import annotations

import json
from collections import Counter

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.datasets import list_instances, load_instance
from crab_gym.envs.realm.jobshop.variants.build import REFERENCES, instances
from crab_gym.envs.realm.jobshop.variants.checker import check
from crab_gym.envs.realm.jobshop.variants.generator import generate_j2
from crab_gym.envs.realm.jobshop.variants.references import time_limit

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


# ----------------------------------------------------------------------------- J2
J2 = instances("J2")


def test_j2_ships_small_medium_and_large_classical_shops_of_200_jobs_by_50_machines():
    assert Counter(i.name.rsplit("_", 2)[1] for i in J2) == {"small": 12, "medium": 8, "large": 4}
    assert list_instances("J2") == [i.name for i in J2]
    for inst in (i for i in J2 if "_large_" in i.name):
        assert (inst.n_jobs, inst.n_machines, inst.n_ops) == (200, 50, 10_000)
        assert all(sorted(m for m, _ in row) == list(range(50)) for row in inst.jobs)  # each machine once
        assert len(inst.disruptions) == 1
        assert load_instance("J2", inst.name).fingerprint() == inst.fingerprint()  # the shipped file is the generator's


@pytest.mark.parametrize("inst", J2, ids=[i.name for i in J2])
def test_each_shipped_j2_reference_is_its_plans_cost_and_no_worse_than_each_run_it_records(inst):
    record = RECORDS[inst.name]
    assert record["fingerprint"] == inst.fingerprint()
    assert check(inst, record["plan"]).cost == record["value"]
    assert record["value"] >= record["bound"] >= inst.trivial_lower_bound() == record["trivial_lower_bound"]
    assert (record["status"] == "OPTIMAL") == (record["value"] == record["bound"])
    assert record["value"] <= min(record["greedy_value"], record["adaptive_greedy_value"], record["adaptive_value"])
    assert record["workers"] == 1 and record["time_limit_s"] >= time_limit(inst)  # the budget is recorded
    assert record["solver_status"] in ("OPTIMAL", "FEASIBLE")  # CP-SAT ran to a status, not only its hint


def test_a_large_j2_reference_is_shipped_so_reset_runs_no_solver():
    env = gym.make("Realm-J2-v0", instance="j2_large_00")
    ref = env.unwrapped.reference
    assert (ref.source, ref.value, ref.status) == ("shipped", RECORDS["j2_large_00"]["value"], "FEASIBLE")
    assert ref.bound == RECORDS["j2_large_00"]["bound"] == generate_j2("large", 0).trivial_lower_bound()
    env.close()
