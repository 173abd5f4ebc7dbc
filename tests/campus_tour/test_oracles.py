"""Realm-P1-v0: the oracle against exhaustive search, and the reference store."""

import pytest

from crab_gym.envs.realm.campus_tour.checker import check_p1
from crab_gym.envs.realm.campus_tour.formats import load_p1
from crab_gym.envs.realm.campus_tour.generator import generate_p1
from crab_gym.envs.realm.campus_tour.oracle import brute_force_p1, certify_p1, solve_p1
from crab_gym.envs.realm.campus_tour.references import reference_p1

P1_SMALL = ["p1_small_05", "p1_small_06"] + [("small", s) for s in (201, 202, 203)]


@pytest.mark.parametrize("which", P1_SMALL)
def test_p1_routing_matches_brute_force(which):
    inst = load_p1(which) if isinstance(which, str) else generate_p1(*which)
    assert inst.n <= 9
    best, _ = brute_force_p1(inst)
    res = solve_p1(inst, time_limit=0.2)
    assert res.status == "FEASIBLE" and res.workers == 1 and res.time_limit_s == 0.2
    assert res.cost == best
    check = check_p1(inst, res.plan, best)
    assert check.feasible and check.cost == best and check.metrics["optimality"] == 1.0


def test_p1_brute_force_is_exhaustive_on_a_hand_checked_tour():
    # three targets: the only feasible order is forced by the windows
    inst = generate_p1("small", 0).model_copy(
        update={
            "locations": ["entrance", "a", "b", "c"],
            "travel": [[0, 5, 5, 5], [5, 0, 1, 9], [5, 9, 0, 1], [5, 1, 9, 0]],
            "windows": [(540, 1000), (600, 610), (540, 560), (700, 710)],
            "max_travel": None, "coords": None,
        }
    )
    # b (by 9:20) -> a (10:00-10:10) -> c (11:40-11:50): 5 + 9 + 9 + 5
    assert brute_force_p1(inst) == (28, ["entrance", "b", "a", "c", "entrance"])
    assert solve_p1(inst, time_limit=0.1).cost == 28


@pytest.mark.parametrize("seed", [401, 402, 403])
def test_p1_certificate_and_a_separate_end_location(seed):
    inst = generate_p1("small", seed)
    # end the tour at the latest-closing target instead of the entrance (it leaves the targets)
    gate = max(inst.targets, key=lambda x: (inst.windows[inst.index[x]][1], x))
    moved = inst.model_copy(update={"end": gate})
    best, route = brute_force_p1(moved)
    assert route[0] == "entrance" and route[-1] == gate and gate not in route[1:-1]
    res = solve_p1(moved, time_limit=0.2)
    assert res.cost == best and res.plan["route"][-1] == gate
    cert = certify_p1(moved, time_limit=2.0)
    assert cert["status"] == "OPTIMAL" and cert["bound"] == best


def test_p1_drops_an_impossible_visit_instead_of_failing():
    inst = generate_p1("small", 0)
    j = inst.index[inst.targets[0]]
    windows = list(inst.windows)
    windows[j] = (0, 10)  # closes at 00:10, long before the tour leaves
    bad = inst.model_copy(update={"windows": windows})
    res = solve_p1(bad, time_limit=0.2)
    assert res.status == "INFEASIBLE" and res.detail["dropped"] == [inst.targets[0]]
    assert res.plan["route"][0] == res.plan["route"][-1] == "entrance" and len(res.plan["route"]) == inst.n
    assert brute_force_p1(bad) == (None, [])
    assert certify_p1(bad, time_limit=1.0)["status"] == "INFEASIBLE"


def test_shipped_references_never_call_a_solver(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("solver called")

    monkeypatch.setattr("crab_gym.envs.realm.campus_tour.oracle.solve_p1", boom)
    assert reference_p1(load_p1("p1_large_03")).source == "shipped"


def test_other_instances_are_solved_once_then_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    inst = generate_p1("small", 77)
    first = reference_p1(inst)
    assert first.source == "solved" and first.value == brute_force_p1(inst)[0]
    assert (tmp_path / "realm" / "p1" / f"{inst.fingerprint()}.json").is_file()
    second = reference_p1(inst.model_copy(update={"name": "renamed"}))
    assert second.source == "cache" and second.value == first.value
