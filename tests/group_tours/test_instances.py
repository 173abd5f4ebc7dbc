"""Realm-P2-v0: the shipped instances, their references and the seeded generator."""

import json

import pytest

from crab_gym.envs.realm.group_tours import build as p2_build
from crab_gym.envs.realm.group_tours.checker import check_p2
from crab_gym.envs.realm.group_tours.formats import load_p2, shipped_p2_names
from crab_gym.envs.realm.group_tours.generator import generate_p2
from crab_gym.envs.realm.group_tours.model import INSTANCE_DIR as P2_DIR
from crab_gym.envs.realm.group_tours.model import P2Instance
from crab_gym.envs.realm.group_tours.oracle import brute_force_p2
from crab_gym.envs.realm.group_tours.references import shipped_p2_references

SHIPPED = [("p2", n) for n in shipped_p2_names()]


def test_twenty_instances_per_problem_across_sizes():
    for names, counts in ((shipped_p2_names(), p2_build.SHIPPED.counts),):
        assert len(names) == 20
        for size, count in counts.items():
            assert sum(f"_{size}_" in n for n in names) == count
    assert max(len(load_p2(n).groups) for n in shipped_p2_names()) == 30


@pytest.mark.parametrize("problem,name", SHIPPED)
def test_shipped_instance_has_a_feasible_reference(problem, name):
    rec = shipped_p2_references()[name]
    inst = load_p2(name)
    assert rec["fingerprint"] == inst.fingerprint()
    assert rec["status"] in ("OPTIMAL", "FEASIBLE")
    assert rec["time_limit_s"] > 0 and rec["workers"] >= 1 and rec["solver"].startswith("ortools")
    # the stored plan is feasible and costs exactly the stored value (independent checker)
    check = check_p2(inst, rec["plan"], rec["value"])
    assert check.feasible and check.cost == rec["value"]
    assert check.metrics["optimality"] == 1.0
    if "_small_" in name:  # exhaustive search agreed when the references were built
        assert rec["brute_force_value"] == rec["value"]
    assert rec["status"] == "OPTIMAL"  # CP-SAT proved every shipped P2 reference


@pytest.mark.parametrize("problem,name", SHIPPED)
def test_shipped_files_are_what_the_build_script_generates(problem, name):
    _, size, k = name.split("_")
    made = generate_p2(size, seed=int(k), name=name)
    on_disk = json.loads((P2_DIR / f"{name}.json").read_text())
    assert made.model_dump(mode="json", exclude_none=True) == on_disk


def test_generators_are_seeded():
    assert generate_p2("large", 1) == generate_p2("large", 1)
    assert generate_p2("large", 1).groups != generate_p2("large", 2).groups
    p2 = generate_p2("small", 7, n_groups=9, n_guides=4)
    assert len(p2.groups) == 9 and len(p2.guides) == 4


@pytest.mark.parametrize("seed", range(12))
def test_generated_p2_is_feasible(seed):
    inst = generate_p2("small", 1000 + seed)
    cost, plan = brute_force_p2(inst)
    assert cost is not None
    assert check_p2(inst, {"assignments": plan}, cost).feasible
    for g in inst.groups:
        assert 7 * 60 <= g.arrival <= g.preferred


def test_models_reject_inconsistent_data():
    p2 = generate_p2("small", 0).model_dump()
    with pytest.raises(ValueError, match="unique"):
        P2Instance.model_validate({**p2, "guides": p2["guides"] + p2["guides"][:1]})
