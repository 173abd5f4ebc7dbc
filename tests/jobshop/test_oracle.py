"""CP-SAT oracle: proofs on classic instances and brute force on tiny ones."""

import itertools
import json

import pytest

from crab_gym.datasets.jssp import load_jssp_instance, random_instance, solve_jssp
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.jobshop.oracle import result_from_record, result_record, with_oracle_bounds

from .helpers import check_feasible, semi_active_makespan


@pytest.mark.parametrize("name, optimum", [("ft06", 55), ("la01", 666)])
def test_oracle_proves_known_optima(name, optimum):
    inst = load_jssp_instance(name)
    result = solve_jssp(inst, time_limit=20.0, num_workers=2)
    assert type(result) is OracleResult and result.status == "OPTIMAL" and result.feasible
    assert result.cost == result.bound == result.detail["solver_makespan"] == optimum
    assert (result.time_limit_s, result.workers) == (20.0, 2)
    assert result.solver.startswith("ortools-cp-sat") and result.detail["instance"] == name
    assert semi_active_makespan(inst.durations, inst.machines, result.plan["sequence"])[0] == optimum
    starts = {(j, k): s for j, row in enumerate(result.detail["starts"]) for k, s in enumerate(row)}
    check_feasible(inst.durations, inst.machines, starts)
    ends = max(s + inst.durations[j][k] for (j, k), s in starts.items())
    assert ends == optimum


def brute_force_optimum(inst) -> int:
    """Minimum semi-active makespan over every combination of machine orders."""
    jobs_on = [[j for j in range(inst.n_jobs) if mc in inst.machines[j]] for mc in range(inst.n_machines)]
    best = None
    for orders in itertools.product(*(itertools.permutations(js) for js in jobs_on)):
        try:
            mk, _ = semi_active_makespan(inst.durations, inst.machines, [list(o) for o in orders])
        except AssertionError:
            continue
        best = mk if best is None else min(best, mk)
    return best


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_oracle_matches_brute_force_on_tiny_instances(seed):
    inst = random_instance(3, 3, seed, low=1, high=20)
    result = solve_jssp(inst, time_limit=5.0, num_workers=1)
    assert result.status == "OPTIMAL"
    assert result.cost == brute_force_optimum(inst)


def test_oracle_cache_and_bounds(tmp_path):
    inst = random_instance(4, 3, 7)
    first = solve_jssp(inst, time_limit=5.0, num_workers=1, cache=tmp_path)
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and "_t5_w1" in files[0].name
    again = solve_jssp(inst, time_limit=5.0, num_workers=1, cache=tmp_path)
    assert again == first
    assert result_from_record(json.loads(json.dumps(result_record(first))), inst) == first
    tightened = with_oracle_bounds(inst, first)
    assert tightened.reference == (first.cost, "optimum")


def test_a_cache_entry_of_the_former_result_shape_is_read_as_the_same_result(tmp_path):
    inst = random_instance(4, 3, 7)
    fresh = solve_jssp(inst, time_limit=5.0, num_workers=1, cache=tmp_path)
    entry = next(tmp_path.iterdir())
    old = {"instance": "old name", "makespan": fresh.detail["solver_makespan"], "lower_bound": fresh.bound,
           "optimal": True, "status": fresh.status, "starts": fresh.detail["starts"], "time_limit": 5.0,
           "num_workers": 1, "solver": fresh.solver}  # what a cache held before the common type
    entry.write_text(json.dumps(old))
    assert solve_jssp(inst, time_limit=5.0, num_workers=1, cache=tmp_path) == fresh
    entry.write_text(json.dumps({"makespan": 3}))  # damaged: solved again
    assert solve_jssp(inst, time_limit=5.0, num_workers=1, cache=tmp_path) == fresh
