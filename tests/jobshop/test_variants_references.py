"""The shipped J3 references: each plan, read by the independent checker, gives its value,
and every value is certified optimal or within 1 % of its proven bound. The shipped J2
references (small, medium and large 200 x 50): each plan gives its value, no worse than any
run the record keeps, with CP-SAT's status and budget recorded; the same for J4, none beaten
by the independent audit's CP-SAT plans, and the adaptive values of today's simulator."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.datasets import list_instances, load_instance
from crab_gym.envs.realm.jobshop.variants.build import REFERENCES, instances, load_hints
from crab_gym.envs.realm.jobshop.variants.checker import check
from crab_gym.envs.realm.jobshop.variants.generator import generate_j2
from crab_gym.envs.realm.jobshop.variants.oracle import adaptive_makespan, greedy_plan, reference_record
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


def test_a_large_j2_reference_is_shipped_so_reset_runs_no_solver():
    env = gym.make("Realm-J2-v0", instance="j2_large_00")
    ref = env.unwrapped.reference
    assert (ref.source, ref.value, ref.status) == ("shipped", RECORDS["j2_large_00"]["value"], "FEASIBLE")
    assert ref.bound == RECORDS["j2_large_00"]["bound"] == generate_j2("large", 0).trivial_lower_bound()
    env.close()


# ----------------------------------------------------------------------------- J2 and J4
J4 = instances("J4")
DISRUPTED = J2 + J4
AUDIT_PLANS = json.loads((Path(__file__).parent / "data" / "j2_j4_audit_plans.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("inst", DISRUPTED, ids=[i.name for i in DISRUPTED])
def test_each_shipped_reference_is_its_plans_cost_and_no_worse_than_each_run_it_records(inst):
    record = RECORDS[inst.name]
    assert record["fingerprint"] == inst.fingerprint()
    assert check(inst, record["plan"]).cost == record["value"]
    assert record["value"] >= record["bound"] >= inst.trivial_lower_bound() == record["trivial_lower_bound"]
    assert (record["status"] == "OPTIMAL") == (record["value"] == record["bound"])
    assert record["value"] <= min(record["greedy_value"], record["adaptive_greedy_value"], record["adaptive_value"])
    if record["workers"]:  # CP-SAT ran (workers 0: the greedy plan certified by the bound); its budget is recorded
        assert record["workers"] == 1 and record["time_limit_s"] >= time_limit(inst)
    if inst in J2:
        assert record["workers"] == 1 and record["solver_status"] in ("OPTIMAL", "FEASIBLE")  # not only its hint


@pytest.mark.parametrize("name", sorted(AUDIT_PLANS))
def test_no_shipped_reference_is_beaten_by_the_independent_audits_cp_sat_plans(name):
    """The audit's own CP-SAT (5 s, hinted with the then shipped plan) beat these references
    (j2_medium_07 1458 -> 1349, j4_medium_05 2698 -> 2569, ...); 1 must be the best plan known."""
    inst = next(i for i in DISRUPTED if i.name == name)
    audit = check(inst, AUDIT_PLANS[name])
    assert audit.feasible
    assert RECORDS[name]["value"] <= audit.cost


@pytest.mark.parametrize("inst", DISRUPTED, ids=[i.name for i in DISRUPTED])
def test_every_j2_j4_solve_is_recorded_within_30_s_on_one_worker_and_bounds_every_plan(inst):
    record = RECORDS[inst.name]
    for solve in record.get("solves", []):
        assert solve["workers"] == 1 and 0 < solve["time_limit_s"] <= 30 and solve["solver"].startswith("ortools-cp-sat")
        assert solve["status"] in ("OPTIMAL", "FEASIBLE") and solve["bound"] <= record["bound"] <= record["value"]
    assert record["time_limit_s"] <= 30 and record["adaptive_time_limit_s"] <= 30


SMALL_AND_MEDIUM = [i for i in DISRUPTED if "_large_" not in i.name]


@pytest.mark.parametrize("inst", SMALL_AND_MEDIUM, ids=[i.name for i in SMALL_AND_MEDIUM])
def test_the_stored_adaptive_greedy_value_is_the_current_simulators(inst):
    """Re-planning with the greedy planner at every strike has no solver, so it is replayed
    exactly: the stored value was run through today's simulator (right-shift-only repair)."""
    value, _ = adaptive_makespan(inst, greedy_plan)
    assert RECORDS[inst.name]["adaptive_greedy_value"] == value


def test_a_hints_file_with_a_plan_the_checker_refuses_is_an_error_naming_it(tmp_path):
    inst = J2[0]
    bad = tmp_path / "hints.json"
    bad.write_text(json.dumps({inst.name: {"sequence": [[0]] * inst.n_machines}}), encoding="utf-8")
    with pytest.raises(ValueError, match=f"hints.json: the plan of {inst.name} is not feasible"):
        load_hints(bad, {inst.name: inst})
    good = tmp_path / "good.json"
    good.write_text(json.dumps({inst.name: RECORDS[inst.name]["plan"], "j9_other": {"sequence": []}}), encoding="utf-8")
    assert load_hints(good, {inst.name: inst}) == {inst.name: RECORDS[inst.name]["plan"]["sequence"]}


def test_a_hint_cheaper_than_the_solvers_plan_is_shipped_under_its_label():
    """A hint is one more candidate: with CP-SAT cut to nothing, the stored reference plan
    (cheaper than greedy) wins and the record names where it came from."""
    inst = next(i for i in J2 if i.name == "j2_medium_03")
    stored = RECORDS[inst.name]["plan"]["sequence"]
    record = reference_record(inst, 0.05, adaptive_time_limit=0.05, hints={"stored reference": stored})
    assert record["value"] == RECORDS[inst.name]["value"] < record["greedy_value"]
    assert record["plan_from"] == "stored reference" and record["plan"]["sequence"] == stored
    assert record["value"] == check(inst, record["plan"]).cost
