"""Stored reference plans: every shipped instance has one, its makespan is checked
independently, and OraclePolicy submits it (no solver) to score best known / plan makespan."""

from collections import deque

import gymnasium as gym
import pytest

from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.jobshop import build as build_plans
from crab_gym.envs.realm.jobshop import list_jssp_instances, load_jssp_instance, oracle, random_instance
from crab_gym.envs.realm.jobshop.checker import plan_makespan
from crab_gym.envs.realm.jobshop.env import JobShopEnv
from crab_gym.envs.realm.jobshop.heuristics import RULES, run_rule
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.oracle import sequence_from_starts
from crab_gym.envs.realm.jobshop.references import LITERATURE, reference_plan, stored_plans
from crab_gym.envs.realm.jobshop.sim import JobShopSchedule

from .helpers import ENV_ID, check_feasible, ensure_registered

ensure_registered()

NAMES = list_jssp_instances()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def no_solver(monkeypatch):
    """Any CP-SAT call fails the test: shipped instances must not need one."""

    def refuse(*args, **kwargs):
        raise AssertionError("the CP-SAT oracle was called")

    from ortools.sat.python import cp_model

    import crab_gym.envs.realm.jobshop as jssp

    monkeypatch.setattr(oracle, "solve_jssp", refuse)
    monkeypatch.setattr(jssp, "solve_jssp", refuse)
    monkeypatch.setattr(build_plans, "solve_jssp", refuse)
    monkeypatch.setattr(cp_model, "CpSolver", refuse)


def longest_path_starts(inst: JSSPInstance, sequence) -> dict:
    """Earliest starts of a plan by a longest-path pass over its disjunctive graph (job chains
    plus the plan's machine orders), in Kahn's topological order; fails on a cycle."""
    occurrence = {}
    for j in range(inst.n_jobs):
        for k in range(inst.n_ops):
            occurrence.setdefault((j, inst.machines[j][k]), []).append(k)
    succ = {(j, k): [] for j in range(inst.n_jobs) for k in range(inst.n_ops)}
    indeg = dict.fromkeys(succ, 0)
    for j in range(inst.n_jobs):
        for k in range(1, inst.n_ops):
            succ[(j, k - 1)].append((j, k))
            indeg[(j, k)] += 1
    for mc, row in enumerate(sequence):
        used: dict[int, int] = {}
        prev = None
        for j in row:
            op = (j, occurrence[(j, mc)][used.get(j, 0)])
            used[j] = used.get(j, 0) + 1
            if prev is not None:
                succ[prev].append(op)
                indeg[op] += 1
            prev = op
    start = dict.fromkeys(succ, 0)
    queue = deque(op for op, d in indeg.items() if d == 0)
    seen = 0
    while queue:
        op = queue.popleft()
        seen += 1
        end = start[op] + inst.durations[op[0]][op[1]]
        for nxt in succ[op]:
            start[nxt] = max(start[nxt], end)
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                queue.append(nxt)
    assert seen == len(succ), "the plan's disjunctive graph has a cycle"
    return start


def test_every_shipped_instance_has_a_plan_with_its_provenance():
    plans = stored_plans()
    assert list(plans) == NAMES  # all 162, in library order
    for name, plan in plans.items():
        inst = load_jssp_instance(name)
        assert reference_plan(inst) is plan and plan.fingerprint == inst.fingerprint()
        assert plan.status in ("OPTIMAL", "FEASIBLE")
        assert plan.num_workers == 1 and plan.time_limit in (10.0, 15.0)
        assert plan.solver.startswith("ortools-cp-sat ")


@pytest.mark.parametrize("name", NAMES)
def test_plan_makespan_is_checked_three_ways_and_bounded_by_the_literature(name):
    inst = load_jssp_instance(name)
    plan = reference_plan(inst)
    seq = [list(r) for r in plan.sequence]
    # 1. independent longest-path computation
    starts = longest_path_starts(inst, seq)
    check_feasible(inst.durations, inst.machines, starts)
    independent = max(starts[(j, inst.n_ops - 1)] + inst.durations[j][-1] for j in range(inst.n_jobs))
    # 2. the env's schedule engine, as submit_plan runs it
    schedule = JobShopSchedule(inst)
    reason, order = schedule.check_plan(seq)
    assert reason is None, reason
    schedule.apply_plan(order)
    assert schedule.complete
    assert schedule.start == [[starts[(j, k)] for k in range(inst.n_ops)] for j in range(inst.n_jobs)]
    # 3. the package's own replay
    assert independent == schedule.makespan == plan_makespan(inst, seq) == plan.makespan
    # never below any proven bound (a sanity check on the plan and on the literature)
    literature_lb = inst.optimum if inst.optimum is not None else inst.lower_bound
    assert plan.makespan >= max(literature_lb, inst.trivial_lower_bound(), plan.solver_bound)
    if plan.status == "OPTIMAL":
        assert plan.makespan == plan.solver_bound
        if inst.optimum is not None:
            assert plan.makespan == inst.optimum
        if inst.upper_bound is not None:
            assert plan.makespan <= inst.upper_bound


def test_oracle_policy_scores_best_known_over_its_plan_on_every_shipped_instance_without_a_solver(no_solver):
    kinds = {}
    for name in NAMES:
        env = JobShopEnv(name)
        policy = OraclePolicy(env)
        obs, info = env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        assert info["valid"] and terminated, (name, info["error"])
        m = info["metrics"]
        plan = reference_plan(env.instance)
        inst = env.instance
        best = inst.optimum if inst.optimum is not None else inst.upper_bound
        assert m["makespan"] == plan.makespan and m["reference_makespan"] == best, name
        assert m["optimality"] == pytest.approx(best / plan.makespan), name  # below 1 where the plan is longer
        assert m["planning_quality"] == 1.0 and m["constraint_satisfaction"] == 1.0
        assert info["completeness"] == 1.0
        assert reward == pytest.approx(0.5 + 0.5 * m["optimality"])
        assert m["best_known"] == info["best_known"] == best
        assert m["gap_to_best_known"] == pytest.approx(plan.makespan / best - 1)
        expected = "optimum" if inst.optimum is not None or plan.status == "OPTIMAL" else "upper_bound"
        assert m["reference_kind"] == info["reference_kind"] == expected, name
        assert env.reference.plan == policy.plan_arguments(env) == {"sequence": [list(r) for r in plan.sequence]}
        kinds[expected] = kinds.get(expected, 0) + 1
    assert sum(kinds.values()) == 162


def test_an_agent_is_scored_against_the_best_known_makespan():
    env = JobShopEnv("ta01")
    info = run_rule(env, RULES["MWKR"])
    m = info["metrics"]
    ref = 1231
    assert m["makespan"] == 1562
    assert m["reference_makespan"] == ref and m["optimality"] == pytest.approx(ref / 1562)
    assert m["best_known"] == 1231 and m["best_known_kind"] == "optimum"
    assert m["literature_lower_bound"] == 1231
    assert m["gap_to_best_known"] == pytest.approx(1562 / 1231 - 1)


def test_ft06_reference_is_the_optimum():
    env = gym.make(ENV_ID, instance="ft06")
    _, info = env.reset()
    assert info["reference"] == 55 and info["reference_kind"] == "optimum" and info["best_known"] == 55


def test_edited_data_gets_no_stored_plan():
    inst = load_jssp_instance("ft06")
    durations = [list(r) for r in inst.durations]
    durations[0][0] += 1
    edited = JSSPInstance(durations=durations, machines=inst.machines, name="ft06")
    assert reference_plan(edited) is None
    renamed = JSSPInstance(durations=inst.durations, machines=inst.machines, name="mine")
    assert reference_plan(renamed) is reference_plan(inst)


def test_generated_instances_are_solved_visibly(capsys):
    # the default yardstick of a generated instance is the solver's, whose plan the oracle submits
    env = JobShopEnv(generator=(4, 3), reference_solve="inline")
    obs, info = env.reset(seed=3)
    obs, reward, terminated, _, info = env.step(OraclePolicy(env)(obs, info))
    assert info["valid"] and terminated and info["metrics"]["optimality"] == 1.0
    assert capsys.readouterr().err == ""  # no second solve: the reference holds the plan
    # with reference="bound" there is no plan: OraclePolicy solves, and says so
    env = JobShopEnv(generator=(4, 3), reference="bound")
    obs, info = env.reset(seed=3)
    policy = OraclePolicy(env, jssp_time_limit=2.0, jssp_workers=1)
    obs, reward, terminated, _, info = env.step(policy(obs, info))
    assert info["valid"] and terminated
    err = capsys.readouterr().err
    assert "has no stored plan; solving with CP-SAT for up to 2 s on 1 worker(s)" in err
    assert "CP-SAT OPTIMAL" in err
    # measured against a lower bound, optimality is at most 1
    assert info["metrics"]["best_known"] is None and info["metrics"]["gap_to_best_known"] is None
    assert 0 < info["metrics"]["optimality"] <= 1.0
    quiet = OraclePolicy(env, jssp_time_limit=2.0, jssp_workers=1, verbose=False)
    env.reset(seed=3)
    quiet(obs, info)
    assert capsys.readouterr().err == ""


def test_sequence_from_starts_keeps_zero_length_operations_in_job_order():
    # job 0: M0 (0 long) then M1 (0 long), job 1: M1 (0 long) then M0 (0 long); all start at 0
    zeros = JSSPInstance(durations=[[0, 0], [0, 0]], machines=[[0, 1], [1, 0]], name="zeros")
    seq = sequence_from_starts(zeros, [[0, 0], [0, 0]])
    assert seq == [[0, 1], [0, 1]] and plan_makespan(zeros, seq) == 0
    with pytest.raises(ValueError, match="deadlocks"):
        plan_makespan(zeros, [[1, 0], [0, 1]])  # each machine waits for the other's second op
    # a zero-length operation goes before a positive one starting at the same time
    mixed = JSSPInstance(durations=[[0, 3], [2, 0]], machines=[[0, 1], [0, 1]], name="mixed")
    seq = sequence_from_starts(mixed, [[2, 2], [0, 5]])
    assert seq == [[1, 0], [0, 1]] and plan_makespan(mixed, seq) == 5
    with pytest.raises(ValueError, match="machine 0"):
        plan_makespan(mixed, [[0], [0, 1]])


def test_build_script_is_resumable(tmp_path, monkeypatch):
    out = tmp_path / "plans.json.gz"
    plans = build_plans.build(out, names=["ft06"], small_limit=2.0)
    assert plans["ft06"]["makespan"] == 55 and plans["ft06"]["status"] == "OPTIMAL"
    assert plans["ft06"]["time_limit"] == 2.0 and plans["ft06"]["num_workers"] == 1

    def refuse(*args, **kwargs):
        raise AssertionError("solved again")

    monkeypatch.setattr(build_plans, "solve_jssp", refuse)
    again = build_plans.build(out, names=["ft06"], small_limit=2.0)  # read back, not solved
    assert again == plans


def test_instance_swap_updates_the_reference():
    env = JobShopEnv("la01")
    env.reset()
    assert env.reference.value == 666
    env.reset(options={"instance": "la02"})
    assert env.reference.value == reference_plan(load_jssp_instance("la02")).makespan == 655
    assert env.reference.extra["best_known"] == 655


def test_generated_instance_is_measured_against_the_solver_or_on_request_its_lower_bound():
    inst = random_instance(5, 4, 7)
    env = JobShopEnv(inst, reference_solve="inline")
    env.reset()
    assert reference_plan(inst) is None
    ref = env.reference
    assert ref.source == "solved" and ref.status == "OPTIMAL" and ref.workers == 1
    assert ref.extra["reference_kind"] == "optimum" and ref.value == ref.bound > inst.trivial_lower_bound()
    assert plan_makespan(inst, ref.plan["sequence"]) == ref.value  # OraclePolicy submits it: 1
    bound = JobShopEnv(inst, reference="bound").reference
    assert (bound.value, bound.extra["reference_kind"]) == (inst.trivial_lower_bound(), "lower_bound")
    with pytest.raises(ValueError, match='"bound"'):
        JobShopEnv(inst, reference="best")


def test_reference_is_the_best_known_value_with_the_stored_plan_as_one_record():
    env = JobShopEnv("ta01")
    env.reset()
    ref, plan, inst = env.reference, reference_plan(load_jssp_instance("ta01")), env.instance
    assert isinstance(ref, Reference) and ref.feasible and ref.source == "shipped"
    assert (ref.value, ref.status, ref.bound) == (1231, "OPTIMAL", 1231)
    assert (ref.solver, ref.time_limit_s, ref.workers) == (LITERATURE, None, None)
    assert ref.fingerprint == inst.fingerprint()
    assert ref.extra == {
        "reference_kind": "optimum", "best_known": 1231, "best_known_kind": "optimum",
        "literature_optimum": 1231, "literature_upper_bound": 1231, "literature_lower_bound": 1231,
        "best_known_source": "OptalCP run by the archive's maintainers (Intel 11th Gen Core i7-1185G7, 1 s) "
                             "(read in scheduleopt2026); schedule first reported by Henning 2002 (PhD thesis, "
                             "Friedrich-Schiller-Universitaet Jena) (read in weise2020)",
        "best_known_date": "2026-06-01", "best_known_compiled": "2026-08-19", "best_known_checked": "2026-11-29",
        "best_known_certified": False,
        "plan_makespan": plan.makespan, "plan_kind": plan.kind(inst), "plan_status": plan.status,
        "plan_bound": plan.solver_bound, "plan_solver": plan.solver, "plan_time_limit_s": plan.time_limit,
        "plan_workers": plan.num_workers, "plan_seeded_with": plan.seeded_with,
    }
    # the plan is exactly the submit_plan arguments, and scores best known / its makespan
    _, reward, terminated, _, info = env.step({"name": "submit_plan", "arguments": ref.plan})
    assert terminated and info["metrics"]["optimality"] == pytest.approx(1231 / plan.makespan)
    assert reward == pytest.approx(0.5 + 0.5 * 1231 / plan.makespan)
    assert not hasattr(env, "reference_makespan") and not hasattr(env, "reference_kind")


def test_instance_values_give_the_reference_without_a_plan():
    base = random_instance(4, 3, 5)
    lb = base.trivial_lower_bound()
    cases = [
        ({"optimum": lb + 3, "lower_bound": lb + 3, "upper_bound": lb + 3}, lb + 3, "OPTIMAL", "optimum", lb + 3),
        ({"upper_bound": lb + 9, "lower_bound": lb + 2}, lb + 9, "FEASIBLE", "upper_bound", lb + 2),
        ({"lower_bound": lb + 2}, lb + 2, "LOWER_BOUND", "lower_bound", lb + 2),
        ({}, lb, "LOWER_BOUND", "lower_bound", lb),
    ]
    for values, value, status, kind, bound in cases:
        inst = JSSPInstance(durations=base.durations, machines=base.machines, name="mine", **values)
        ref = JobShopEnv(inst, reference="bound").reference  # no solver: the instance's values
        assert (ref.value, ref.status, ref.extra["reference_kind"], ref.bound) == (value, status, kind, bound)
        assert ref.plan is None and ref.source == "instance" and ref.solver == ""
        assert ref.feasible == (status != "LOWER_BOUND")


def test_a_given_reference_is_scored_against_and_reported():
    env = JobShopEnv("ta01", reference=1400)
    _, info = env.reset()
    assert env.reference.status == "GIVEN" and env.reference.value == 1400.0
    assert (info["reference"], info["reference_kind"], info["best_known"]) == (1400.0, "given", 1231)
    info = run_rule(env, RULES["MWKR"])  # makespan 1562
    m = info["metrics"]
    assert m["reference_makespan"] == 1400 and m["reference_kind"] == "given"
    assert m["optimality"] == pytest.approx(1400 / 1562) and m["gap"] == pytest.approx(1562 / 1400 - 1)
    assert m["best_known"] == 1231 and m["gap_to_best_known"] == pytest.approx(1562 / 1231 - 1)
    # another instance keeps the given value (it is the env's argument, not the instance's)
    _, info = env.reset(options={"instance": "ta02"})
    assert info["reference"] == 1400.0 and info["best_known"] == 1244
    assert "1400.0 (given)" in env.task_description
    env.render_mode = "rgb_array"
    assert env.render().ndim == 3


def test_an_all_zero_instance_scores_its_only_schedule_as_optimal():
    zeros = JSSPInstance(durations=[[0, 0], [0, 0]], machines=[[0, 1], [1, 0]], name="zeros")
    env = JobShopEnv(zeros, reference_solve="inline")
    env.reset()
    for job in (0, 0, 1, 1):
        _, reward, terminated, _, info = env.step((0, {"job": job}))
    assert terminated and info["makespan"] == 0 and info["metrics"]["optimality"] == 1.0
