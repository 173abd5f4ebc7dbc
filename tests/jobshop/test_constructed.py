"""Instances with a known optimum (crab_gym.envs.realm.jobshop.constructed): the laid-out
schedule is feasible, its makespan equals the instance's machine-load bound, and CP-SAT agrees."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from crab_gym.checks.scoring import check_scoring, local_search, submit
from crab_gym.envs.realm.jobshop.checker import check
from crab_gym.envs.realm.jobshop.constructed import (
    J3_SHAPE,
    STATUS,
    constructed_instance,
    constructed_j3,
    constructed_p11,
    constructed_reference,
    draw_constructed,
)
from crab_gym.envs.realm.jobshop.heuristics import RULES, run_rule
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.oracle import solve_jssp

from .helpers import check_feasible, ensure_registered, semi_active_makespan

CLASSICAL = [(4, 4), (5, 5), (6, 4), (6, 6), (10, 10), (15, 15), (20, 5), (30, 15)]
RECIRCULATING = [(4, 2, 3), (8, 3, 5), (20, 5, 6), (40, 10, 8)]


def machine_loads(inst: JSSPInstance) -> np.ndarray:
    """Each machine's total work, from the data alone (written apart from the model's bound)."""
    loads = np.zeros(inst.n_machines, dtype=np.int64)
    for drow, mrow in zip(inst.durations, inst.machines):
        for p, mc in zip(drow, mrow):
            loads[mc] += p
    return loads


def assert_certified(inst: JSSPInstance, cert, low: int = 1, high: int = 99) -> None:
    """The certificate's schedule is feasible and ends at C*, and no schedule ends sooner."""
    c_star = cert.makespan
    loads = machine_loads(inst)
    longest_job = max(sum(row) for row in inst.durations)
    assert max(int(loads.max()), longest_job) == c_star == cert.lower_bound == inst.trivial_lower_bound()
    assert [mc for mc in range(inst.n_machines) if loads[mc] == c_star] >= list(cert.saturated)
    assert all(loads[mc] == c_star for mc in cert.saturated)
    starts = {(j, k): s for j, row in enumerate(cert.starts) for k, s in enumerate(row)}
    check_feasible(inst.durations, inst.machines, starts)
    assert max(s + inst.durations[j][k] for (j, k), s in starts.items()) == c_star
    assert min(starts.values()) >= 0
    verdict = check(inst, {"sequence": [list(r) for r in cert.sequence]})  # the family's plan checker
    assert verdict.feasible and verdict.cost == c_star
    assert semi_active_makespan(inst.durations, inst.machines, cert.sequence)[0] == c_star
    durations = inst.durations_array()
    assert durations.min() >= low and durations.max() <= high
    assert inst.reference == (c_star, "optimum")


@pytest.mark.parametrize("jobs, machines", CLASSICAL)
@pytest.mark.parametrize("seed", range(6))
def test_classical_instances_meet_their_bound(jobs, machines, seed):
    inst, cert = constructed_instance(jobs, machines, seed=seed)
    assert (inst.n_jobs, inst.n_machines, inst.n_ops) == (jobs, machines, machines)
    for row in inst.machines:  # each job visits each machine exactly once
        assert sorted(row) == list(range(machines))
    assert_certified(inst, cert)
    assert len(cert.saturated) == -(-machines // 3)


@pytest.mark.parametrize("jobs, machines, ops", RECIRCULATING)
@pytest.mark.parametrize("seed", range(6))
def test_recirculating_instances_meet_their_bound(jobs, machines, ops, seed):
    inst, cert = constructed_instance(jobs, machines, seed=seed, recirculation=True, ops_per_job=ops, high=100)
    assert (inst.n_jobs, inst.n_machines, inst.n_ops) == (jobs, machines, ops)
    assert_certified(inst, cert, high=100)


@pytest.mark.parametrize("seed", range(3))
def test_j3_shape(seed):
    inst, cert = constructed_j3(seed)
    assert (inst.n_jobs, inst.n_machines, inst.n_ops) == (200, 50, 12)
    assert_certified(inst, cert, low=J3_SHAPE["low"], high=J3_SHAPE["high"])
    revisits = sum(len(set(row)) < len(row) for row in inst.machines)
    assert revisits > 50  # recirculation: many jobs visit a machine twice
    assert len(cert.saturated) == 17 and len(set(cert.saturated)) == 17


def test_instances_are_not_one_bottleneck_and_empty_machines():
    """Several machines at full load, the others busy but idle at times; varied durations."""
    for inst, cert in (constructed_p11("medium", 3), constructed_j3(3)):
        share = machine_loads(inst) / cert.makespan
        assert (share == 1).sum() >= 4
        others = share[share < 1]
        assert len(others) > 0 and others.min() > 0.5 and others.mean() > 0.6
        assert len(set(inst.durations_array().ravel().tolist())) > 40


def test_no_dispatching_rule_replays_the_layout():
    """The layout is not a rule's schedule: on 10x10 instances every rule ends well above C*
    (a grid where every job does its k-th operation in slot k was solved exactly by MOR)."""
    ensure_registered()
    gaps = {name: [] for name in RULES}
    for seed in range(5):
        inst, cert = constructed_instance(10, 10, seed=seed)
        env = gym.make("Realm-P11-v0", instance=inst)
        for name, rule in RULES.items():
            gaps[name].append(run_rule(env, rule, seed=0)["metrics"]["makespan"] / cert.makespan - 1)
        env.close()
    for name, values in gaps.items():
        assert min(values) > 0.05 and np.mean(values) > 0.15, (name, values)


@pytest.mark.parametrize("jobs, machines, ops, seed", [
    (4, 4, None, 0), (4, 4, None, 1), (5, 5, None, 0), (5, 5, None, 1), (6, 4, None, 0), (6, 4, None, 1),
    (6, 3, 4, 0), (5, 2, 4, 1),
])
def test_cp_sat_finds_and_proves_the_constructed_optimum(jobs, machines, ops, seed):
    inst, cert = constructed_instance(jobs, machines, seed=seed, recirculation=ops is not None, ops_per_job=ops)
    bare = JSSPInstance(durations=inst.durations, machines=inst.machines, n_machines=inst.n_machines)
    result = solve_jssp(bare, time_limit=10.0, num_workers=1)
    assert result.status == "OPTIMAL"
    assert result.cost == result.bound == cert.makespan


def test_the_same_seed_gives_the_same_instance_and_others_differ():
    a, ca = constructed_instance(10, 5, seed=7)
    b, cb = constructed_instance(10, 5, seed=7)
    assert a == b and ca == cb and a.name == "constructed_10x5_7"
    c, _ = constructed_instance(10, 5, seed=8)
    assert not a.same_data(c)
    r1, _ = constructed_j3(1)
    r2, _ = constructed_j3(1)
    assert r1.fingerprint() == r2.fingerprint() and r1.name == "constructed_200x50r_1"
    seen = {constructed_instance(6, 6, seed=s)[0].fingerprint() for s in range(20)}
    assert len(seen) == 20


def test_reference_record_needs_no_solver():
    inst, cert = constructed_p11("small", 5)
    ref = cert.reference()
    assert ref.status == STATUS and ref.feasible and ref.value == ref.bound == ref.measure == cert.makespan
    assert ref.source == "constructed" and ref.fingerprint == inst.fingerprint()
    assert ref.extra["reference_kind"] == "optimum" and ref.extra["saturated_machines"] == list(cert.saturated)
    assert check(inst, ref.plan).cost == ref.value
    assert type(ref).from_record(ref.to_dict()).value == ref.value


def test_the_p11_env_scores_against_the_constructed_optimum():
    ensure_registered()
    inst, cert = constructed_p11("medium", 2)
    env = gym.make("Realm-P11-v0", instance=inst)
    env.reset(seed=0)
    ref = env.unwrapped.reference
    assert (ref.value, ref.status, ref.bound, ref.source) == (cert.makespan, "OPTIMAL", cert.makespan, "instance")
    plan = {"name": "submit_plan", "arguments": {"sequence": [list(r) for r in cert.sequence]}}
    _, _, terminated, _, info = env.step(plan)
    assert terminated and info["metrics"]["makespan"] == cert.makespan and info["metrics"]["optimality"] == 1.0
    mwkr = run_rule(env, RULES["MWKR"], seed=0)["metrics"]
    assert mwkr["makespan"] > cert.makespan and mwkr["optimality"] == pytest.approx(cert.makespan / mwkr["makespan"])
    env.close()


def test_the_scoring_contract_holds_against_the_constructed_optimum():
    """Do-nothing, random and greedy play on constructed instances keep the scoring promises,
    and a hill climb from the certificate's plan finds nothing shorter than C* (it cannot)."""
    ensure_registered()
    built = [constructed_instance(n, m, seed=s) for n, m, s in ((6, 6, 0), (10, 5, 1), (10, 10, 2), (15, 15, 3))]
    check_scoring("Realm-P11-v0", instances=[inst for inst, _ in built], search_tries=0).raise_if_failed()
    rng = np.random.default_rng(0)
    for inst, cert in built:
        env = gym.make("Realm-P11-v0", instance=inst)
        plan = {"sequence": [list(r) for r in cert.sequence]}
        oracle = submit(env, plan, "oracle")
        assert oracle.feasible and oracle.cost == cert.makespan and oracle.optimality == 1.0
        found = local_search(env, plan, oracle.cost, 30, rng, 0)
        assert found and all(o.cost >= cert.makespan for o in found if o.feasible)
        assert all(o.optimality <= 1.0 for o in found)
        env.close()


def test_drawn_instances_keep_their_reference_for_the_env():
    options = {"n_jobs": 8, "n_machines": 4, "low": 1, "high": 99}
    inst = draw_constructed(options, 11)
    again, cert = constructed_instance(8, 4, seed=11)
    assert inst == again
    ref = constructed_reference(inst)
    assert ref is not None and ref.status == STATUS and ref.value == cert.makespan
    assert ref.plan == {"sequence": [list(r) for r in cert.sequence]}
    assert constructed_reference(constructed_instance(8, 4, seed=12)[0]) is None  # not drawn: looked up as usual


@pytest.mark.parametrize("kwargs, message", [
    ({"jobs": 3, "machines": 4}, "at least as many jobs as machines"),
    ({"jobs": 0, "machines": 4}, "jobs must be a whole number >= 1"),
    ({"jobs": 4, "machines": 2.0}, "machines must be a whole number"),
    ({"jobs": 4, "machines": 4, "seed": -1}, "seed must be a whole number >= 0"),
    ({"jobs": 4, "machines": 4, "seed": True}, "seed must be a whole number"),
    ({"jobs": 4, "machines": 4, "ops_per_job": 3}, "each job visits each of the 4 machines once"),
    ({"jobs": 4, "machines": 4, "recirculation": True, "ops_per_job": 0}, "ops_per_job must be"),
    ({"jobs": 4, "machines": 4, "saturated": 5}, "saturated=5 exceeds the 4 machines"),
    ({"jobs": 4, "machines": 4, "saturated": 0}, "saturated must be"),
    ({"jobs": 4, "machines": 4, "low": 0}, "low must be a whole number >= 1"),
    ({"jobs": 4, "machines": 4, "low": 10, "high": 9}, "high must be a whole number >= 10"),
    ({"jobs": 4, "machines": 4, "fill": 0}, "fill must be in (0, 1]"),
    ({"jobs": 4, "machines": 4, "low": 5, "high": 9}, "cuts slots in halves of at least low=5, so high >= 10"),
])
def test_bad_sizes_are_refused_with_a_clear_error(kwargs, message):
    kwargs = {"seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        constructed_instance(kwargs.pop("jobs"), kwargs.pop("machines"), **kwargs)


def test_unknown_size_class_is_refused():
    with pytest.raises(ValueError, match="unknown size 'huge'"):
        constructed_p11("huge", 0)


# ---------------------------------------------------------------------- the env's generator option
def test_the_env_draws_constructed_instances_scored_without_a_solver() -> None:
    from crab_gym.baselines.oracle_policy import OraclePolicy

    env = gym.make("Realm-P11-v0", generator={"n_jobs": 8, "n_machines": 6, "construction": "bound_tight"})
    seen = set()
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        ref = env.unwrapped.reference
        assert ref.status == "OPTIMAL_BY_CONSTRUCTION" and ref.value == ref.bound == env.unwrapped.instance.optimum
        seen.add(env.unwrapped.instance.fingerprint())
        policy, done = OraclePolicy(env), False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy(obs, info))
            done = terminated or truncated
        assert info["metrics"]["optimality_pending"] is False  # nothing waited for a solve
        assert info["metrics"]["optimality"] == 1.0 and info["metrics"]["makespan"] == ref.value
    assert len(seen) == 2


def test_a_wrong_construction_name_is_refused() -> None:
    with pytest.raises(ValueError, match="construction must be 'bound_tight'"):
        gym.make("Realm-P11-v0", generator={"n_jobs": 8, "n_machines": 6, "construction": "tight"})
