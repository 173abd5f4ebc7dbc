"""Realm-J2/J3/J4: the engine against the independent checker, the disruption model
(strike at the start time, restart, plans that pause), the oracle against brute force,
and the policies."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.realm.jobshop.variants.checker import check, plan_starts, violations
from crab_gym.envs.realm.jobshop.variants.generator import generate_j2, generate_j3, generate_j4
from crab_gym.envs.realm.jobshop.variants.heuristics import RULES, GreedyReplanner
from crab_gym.envs.realm.jobshop.variants.model import Disruption, ShopInstance
from crab_gym.envs.realm.jobshop.variants.oracle import empty_state, greedy_plan, reference_record, solve_from
from crab_gym.envs.realm.jobshop.variants.sim import ShopSim

GENERATORS = {"J2": generate_j2, "J3": generate_j3, "J4": generate_j4}


def play_random(sim: ShopSim, seed: int) -> None:
    rng = np.random.default_rng(seed)
    while not sim.complete:
        sim.dispatch(int(rng.choice([j for j in range(sim.n_jobs) if sim.can_dispatch(j)])))


@pytest.mark.parametrize("problem", ["J2", "J3", "J4"])
@pytest.mark.parametrize("size", ["small", "medium"])
def test_random_schedules_keep_every_constraint_and_equal_the_checkers_reading(problem, size):
    for seed in range(3):
        inst = GENERATORS[problem](size, seed)
        sim = ShopSim(inst)
        play_random(sim, seed)
        kept, total = violations(inst, sim.start)
        assert kept == total
        assert plan_starts(inst, sim.sequences()) == sim.start  # semi-active in its final orders
        assert len(sim.applied) == sum(d.start < sim.makespan for d in inst.disruptions)


def one_machine(start: int = 5, duration: int = 10, jobs=(((0, 10),), ((0, 4),))) -> ShopInstance:
    d = Disruption("machine_breakdown", start, duration, (("machine", 0),))
    return ShopInstance(jobs, 1, "tiny", "J2", (d,))


def test_an_operation_running_when_its_machine_breaks_restarts_after_the_window():
    sim = ShopSim(one_machine())
    sim.dispatch(0)  # [0, 10) on machine 0; the clock is 0 (job 1 is ready at 0)
    assert sim.applied == [] and sim.start[0][0] == 0
    sim.dispatch(1)  # every operation placed: the shop runs to its end, the breakdown at 5 strikes
    assert [d.kind for d in sim.applied] == ["machine_breakdown"]
    assert sim.restarted == [{"job": 0, "op": 0, "machine": 0, "start": 0, "stopped": 5}]
    assert sim.start == [[15], [25]]  # the whole operation again after the window, then job 1
    assert sim.makespan == 29


def test_the_agent_learns_of_a_disruption_at_its_start_not_before():
    inst = one_machine(start=12, duration=5, jobs=(((0, 10), (0, 10)), ((0, 4),)))
    env = gym.make("Realm-J2-v0", instance=inst, reference="bound")
    obs, info = env.reset(seed=0)
    assert not obs["machine_down"].any() and obs["clock"][0] == 0
    obs, _, _, _, info = env.step((0, {"job": 0}))  # job 0's first op [0, 10); clock: job 1 ready at 0
    assert info["disruptions"] == [] and not obs["machine_down"].any()
    obs, _, _, _, info = env.step((0, {"job": 1}))  # [10, 14); clock: min ready = 10 < 12
    assert info["disruptions"] == [] and obs["clock"][0] == 10
    obs, _, term, _, info = env.step((0, {"job": 0}))  # all placed: the breakdown at 12 strikes
    assert term and [d["type"] for d in info["disruptions"]] == ["machine_breakdown"]
    assert info["solution"]["restarted"] == [{"job": 1, "op": 0, "machine": 0, "start": 10, "stopped": 12}]
    assert info["metrics"]["makespan"] == 31  # job 1 again [17, 21), job 0's second op [21, 31)


def test_a_submitted_plan_pauses_at_a_strike_and_resubmitting_it_gives_the_checkers_cost():
    inst = generate_j4("small", 2)
    plan = {"sequence": greedy_plan(inst, empty_state(inst, hindsight=False))}
    env = gym.make("Realm-J4-v0", instance=inst, reference="bound")
    env.reset(seed=0)
    pauses = 0
    while True:
        _, _, term, _, info = env.step({"name": "submit_plan", "arguments": plan})
        assert info["valid"], info["error"]
        if term:
            break
        pauses += 1
        assert info["paused"] and info["disruptions"] and info["pending_plan"]["sequence"]
    assert pauses >= 1
    assert info["metrics"]["makespan"] == check(inst, plan).cost


def test_adaptation_is_not_applicable_when_nothing_struck():
    inst = one_machine(start=1000)
    env = gym.make("Realm-J2-v0", instance=inst, reference="bound", adaptation_reference="resolve")
    env.reset(seed=0)
    env.step((0, {"job": 0}))
    _, _, term, _, info = env.step((0, {"job": 1}))
    assert term and info["metrics"]["adaptation"] is None and info["metrics"]["disruptions_struck"] == 0


def test_the_hindsight_oracle_matches_brute_force_on_tiny_instances():
    for seed in range(4):
        rng = np.random.default_rng(seed)
        jobs = tuple(tuple((int(m), int(p)) for m, p in zip(rng.integers(0, 2, 2), rng.integers(1, 9, 2))) for _ in range(3))
        d = Disruption("machine_breakdown", int(rng.integers(1, 8)), int(rng.integers(2, 9)), (("machine", 0),))
        inst = ShopInstance(jobs, 2, f"tiny{seed}", "J2", (d,))
        per_machine = [[j for j, row in enumerate(jobs) for m, _ in row if m == mc] for mc in range(2)]
        best = min(check(inst, {"sequence": [list(a), list(b)]}).cost
                   for a in set(itertools.permutations(per_machine[0])) for b in set(itertools.permutations(per_machine[1])))
        seq, record = solve_from(inst, empty_state(inst, hindsight=True), time_limit=5)
        assert record["status"] == "OPTIMAL"
        assert check(inst, {"sequence": seq}).cost == best
        assert reference_record(inst, 5)["value"] == best


def test_j3_references_are_certified_by_the_trivial_bound_when_the_greedy_meets_it():
    for seed in range(6):
        record = reference_record(generate_j3("small", seed), 2.0)
        assert record["bound"] >= record["trivial_lower_bound"]
        assert record["value"] >= record["bound"]
        if record["greedy_value"] == record["trivial_lower_bound"]:
            assert record["status"] == "OPTIMAL" and record["time_limit_s"] == 0.0


@pytest.mark.parametrize("env_id", ["Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0"])
def test_the_policies_play_valid_episodes(env_id):
    env = gym.make(env_id, reference="bound")
    for policy in (GreedyReplanner(env), RULES["MWKR"], RULES["FIFO"]):
        obs, info = env.reset(seed=0)
        for _ in range(10_000):
            obs, _, term, _, info = env.step(policy(obs, info))
            assert info["valid"], info["error"]
            if term:
                break
        assert term and info["metrics"]["constraint_satisfaction"] == 1.0


@pytest.mark.parametrize("env_id", ["Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0"])
def test_the_vector_env_equals_single_envs_step_for_step(env_id):
    n = 3
    vec = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", reference="bound")
    singles = [gym.make(env_id, reference="bound").unwrapped for _ in range(n)]
    obs, _ = vec.reset(seed=5)
    for i, env in enumerate(singles):
        single, _ = env.reset(seed=5 + i)
        for key in single:
            np.testing.assert_array_equal(obs[key][i], single[key])
    rng = np.random.default_rng(0)
    pending = [False] * n
    for _ in range(400):
        masks = vec.unwrapped.action_masks()
        for i in np.flatnonzero(pending):  # awaiting its reset: every job, the action is ignored
            assert masks[i].all()
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        obs, rewards, terminated, _, info = vec.step(actions)
        for i, env in enumerate(singles):
            if pending[i]:
                single, _ = env.reset()
                reward, term = 0.0, False
                pending[i] = False
            else:
                single, reward, term, _, _ = env.step((0, {"job": actions[i]}))
                pending[i] = term
            assert rewards[i] == reward and terminated[i] == term
            for key in single:
                np.testing.assert_array_equal(obs[key][i], single[key])


def test_the_batched_j3_vector_env_equals_single_envs_at_200x50_with_masked_and_bad_actions():
    names = ["j3_large_00", "j3_large_01", "j3_large_00"]
    vec = gym.make_vec("Realm-J3-v0", num_envs=3, vectorization_mode="vector_entry_point", instances=names)
    singles = [gym.make("Realm-J3-v0", instance=name).unwrapped for name in names]
    obs, _ = vec.reset(seed=0)
    for i, env in enumerate(singles):
        single, _ = env.reset(seed=i)
        for key in single:
            np.testing.assert_array_equal(obs[key][i], single[key])
    rng = np.random.default_rng(1)
    pending, finished = [False] * 3, 0
    for _ in range(2800):
        masks = vec.unwrapped.action_masks()
        actions = [int(rng.integers(-2, 202)) if rng.random() < 0.1 else int(rng.choice(np.flatnonzero(m))) if m.any() else 0
                   for m in masks]
        obs, rewards, terminated, _, info = vec.step(actions)
        for i, env in enumerate(singles):
            if pending[i]:
                single, _ = env.reset()
                reward, term, pending[i] = 0.0, False, False
            else:
                single, reward, term, _, sinfo = env.step((0, {"job": actions[i]}))
                pending[i] = term
                if term:
                    finished += 1
                    assert info["makespan"][i] == sinfo["metrics"]["makespan"]
                    assert info["optimality"][i] == sinfo["metrics"]["optimality"]
            assert rewards[i] == reward and terminated[i] == term
            for key in single:
                np.testing.assert_array_equal(obs[key][i], single[key])
    assert finished >= 1


@pytest.mark.parametrize("env_id", ["Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0"])
def test_the_vector_env_takes_one_instance_per_env_as_instance_or_instances(env_id):
    prefix = env_id[6:8].lower()
    names = [f"{prefix}_small_00", f"{prefix}_small_01"]
    for kwargs in ({"instance": names}, {"instances": names}):
        vec = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **kwargs).unwrapped
        got = [i.name for i in vec.instances] if hasattr(vec, "instances") else [e.instance.name for e in vec.envs]
        assert got == names
    with pytest.raises(ValueError, match="must list 3 instances, got 2"):
        gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", instance=names)
