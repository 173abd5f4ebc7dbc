"""Realm-P3/P4 instances at reset: same-shape swaps, the seeded generator, and the reference
record that follows the instance (and, in P4, the disruptions the episode faced)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.ridesharing import references
from crab_gym.envs.realm.ridesharing.formats import load_p3, load_p4
from crab_gym.envs.realm.ridesharing.generator import generate_p3, generate_p4
from crab_gym.envs.realm.ridesharing.heuristics import run_greedy
from crab_gym.evaluation.episode_runner import finished_metrics

SHAPE = {"size": "small", "n_requests": 5, "n_vehicles": 2, "n_locations": 8}


@pytest.fixture
def solver_calls(monkeypatch):
    """Counts the oracle runs of on-demand references (P3 solves, P4 best-known searches)."""
    calls = {"p3": 0, "p4": 0}
    solve_p3, best = references.solve_p3, references.best_known

    def counted_p3(*args, **kwargs):
        calls["p3"] += 1
        return solve_p3(*args, **kwargs)

    def counted_p4(*args, **kwargs):
        calls["p4"] += 1
        return best(*args, **kwargs)

    monkeypatch.setattr(references, "solve_p3", counted_p3)
    monkeypatch.setattr(references, "best_known", counted_p4)
    return calls


def play_reference_plan(env: gym.Env) -> dict:
    """Submit ``env.unwrapped.reference.plan`` (again after each P4 pause) until the end."""
    plan = env.unwrapped.reference.plan
    while True:
        _, _, done, _, info = env.step({"name": "submit_plan", "arguments": plan})
        assert info["valid"], info["error"]
        if done:
            return info


# ---------------------------------------------------------------------- one reference API
@pytest.mark.parametrize("env_id, name", [("Realm-P3-v0", "p3_medium_01"), ("Realm-P4-v0", "p4_medium_01")])
def test_reference_is_a_record_whose_plan_is_the_submit_plan_arguments(env_id, name, solver_calls):
    env = gym.make(env_id, instance=name)
    env.reset(seed=0)
    ref = env.unwrapped.reference
    assert isinstance(ref, Reference) and ref.source == "shipped" and ref.feasible
    stored = references.shipped_references(env_id[6:8].lower())[name]
    assert ref.plan == {"assignments": stored["plan"]} and ref.value == stored["value"]
    assert ref.status == stored["status"] and ref.time_limit_s == stored["time_limit_s"] and ref.workers == 1
    info = play_reference_plan(env)
    assert info["metrics"]["optimality"] == 1.0 and info["metrics"]["cost"] == ref.value
    assert solver_calls == {"p3": 0, "p4": 0}  # shipped: no solver, ever


def test_a_given_reference_value_is_used():
    env = gym.make("Realm-P3-v0", reference=50.0)
    _, info = run_greedy(env, seed=0)
    assert env.unwrapped.reference == Reference.given(50.0)
    assert info["metrics"]["reference_cost"] == 50.0
    assert info["metrics"]["optimality"] == pytest.approx(50.0 / info["metrics"]["cost"])


def test_p4_reference_follows_the_disruptions_the_episode_faces(solver_calls, tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    env = gym.make("Realm-P4-v0", instance="p4_small_01")
    env.reset(seed=0)
    base = env.unwrapped
    shipped = base.reference
    assert shipped.source == "shipped"
    inst = base.instance
    jam = {"type": "accident", "location": inst.requests[0].pickup, "duration": 300, "delay": 60}
    base.apply_disruption(jam)
    # looked up again, not solved by reading it (reference_solve="deferred"): it waits
    assert base.reference.status == "PENDING" and solver_calls["p4"] == 0
    faced = base.solved_reference()  # solved now: it faces the injected accident
    assert faced.source == "solved" and faced.status == "OPTIMAL"  # five requests: enumerated
    assert faced.fingerprint.startswith(inst.fingerprint() + "-")
    assert faced.value > shipped.value and solver_calls["p4"] == 1
    info = play_reference_plan(env)
    assert finished_metrics(env, info)["optimality"] == 1.0  # the runner's metrics
    env.reset(seed=0)  # the injection is gone with the episode
    assert base.reference == shipped


# ---------------------------------------------------------------------- swaps at reset
@pytest.mark.parametrize(
    "env_id, first, second, load",
    [("Realm-P3-v0", "p3_small_03", "p3_small_04", load_p3), ("Realm-P4-v0", "p4_small_02", "p4_small_08", load_p4)],
)
def test_reset_swaps_in_an_instance_of_the_same_shape(env_id, first, second, load, solver_calls):
    env = gym.make(env_id, instance=first)
    obs, _ = env.reset(seed=0)
    assert env.unwrapped.reference.value == references.shipped_references(env_id[6:8].lower())[first]["value"]
    obs2, _ = env.reset(seed=0, options={"instance": second})
    base = env.unwrapped
    assert base.instance == load(second) and obs2 in env.observation_space
    assert not np.array_equal(obs["request_times"], obs2["request_times"])
    assert base.reference.value == references.shipped_references(env_id[6:8].lower())[second]["value"]
    info = play_reference_plan(env)
    assert info["metrics"]["optimality"] == 1.0
    env.reset(seed=1)  # without options the env keeps the swapped-in instance
    assert base.instance.name == second
    assert solver_calls == {"p3": 0, "p4": 0}


def _one_request_less(name: str):
    inst = load_p3(name)
    return inst.model_copy(update={"name": "shorter", "requests": inst.requests[:-1]})


@pytest.mark.parametrize(
    "env_id, other, words",
    [
        ("Realm-P3-v0", lambda: "p3_medium_01", "vehicles ['v1', 'v2', 'v3', 'v4'] (this env: ['v1', 'v2'])"),
        ("Realm-P3-v0", lambda: "p3_small_01", "8 places (this env: 6)"),
        ("Realm-P3-v0", lambda: _one_request_less("p3_small_03"), "passengers ['p1', 'p2', 'p3'] (this env: ['p1', 'p2', 'p3', 'p4'])"),
        ("Realm-P4-v0", lambda: "p4_medium_02", "places"),
    ],
)
def test_reset_refuses_an_instance_of_another_shape(env_id, other, words):
    env = gym.make(env_id, instance="p3_small_03" if env_id == "Realm-P3-v0" else "p4_small_01")
    env.reset(seed=0)
    before = env.unwrapped.instance
    with pytest.raises(ValueError, match="does not fit this env") as err:
        env.reset(options={"instance": other()})
    assert words in str(err.value) and "make a new env for it" in str(err.value)
    assert env.unwrapped.instance == before


def test_swap_accepts_objects_mappings_and_files(tmp_path):
    inst = load_p3("p3_small_04")
    path = tmp_path / "mine.json"
    path.write_text(inst.to_json())
    env = gym.make("Realm-P3-v0", instance="p3_small_03")
    for spec in (inst, inst.model_dump(mode="json"), str(path)):
        env.reset(options={"instance": spec})
        assert env.unwrapped.instance.fingerprint() == inst.fingerprint()
    with pytest.raises(TypeError, match="instance must be a shipped"):
        env.reset(options={"instance": 3.5})


# ---------------------------------------------------------------------- the generator
@pytest.mark.parametrize("env_id, generate", [("Realm-P3-v0", generate_p3), ("Realm-P4-v0", generate_p4)])
def test_generator_is_seeded_deterministic_and_keeps_its_shape(env_id, generate, solver_calls):
    a, b = gym.make(env_id, generator=SHAPE), gym.make(env_id, generator=SHAPE)
    drawn = []
    for seed in range(6):
        obs_a, _ = a.reset(seed=seed)
        obs_b, _ = b.reset(seed=seed)
        inst = a.unwrapped.instance
        assert inst == b.unwrapped.instance  # same seed, same instance
        assert all(np.array_equal(obs_a[k], obs_b[k]) for k in obs_a)
        assert obs_a in a.observation_space
        assert (inst.n_requests, inst.n_vehicles, len(inst.locations)) == (5, 2, 8)
        assert inst.name.startswith(f"p{env_id[7]}_generated_")
        drawn.append(inst.fingerprint())
    assert len(set(drawn)) == 6  # a fresh instance on every reset
    assert solver_calls == {"p3": 0, "p4": 0}  # reset never waits on a solver
    seed = int(a.unwrapped.instance.name.rsplit("_", 1)[1])
    counts = {k: v for k, v in SHAPE.items() if k != "size"}
    assert a.unwrapped.instance == generate("small", seed, a.unwrapped.instance.name, **counts)
    if env_id == "Realm-P4-v0":
        assert a.unwrapped.instance.disruptions


@pytest.mark.parametrize("env_id", ["Realm-P3-v0", "Realm-P4-v0"])
def test_generated_references_are_solved_at_the_end_once_and_cached(env_id, solver_calls, tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    # the default, reference_solve="deferred": the episode solves nothing (the runner's finish will)
    lazy = gym.make(env_id, generator={"n_requests": 3, "n_vehicles": 2, "n_locations": 6})
    _, lazy_info = run_greedy(lazy, seed=11)
    assert lazy_info["metrics"]["optimality_pending"] and lazy_info["metrics"]["optimality"] is None
    assert solver_calls == {"p3": 0, "p4": 0} and not list(tmp_path.rglob("*.json"))
    env = gym.make(env_id, generator={"n_requests": 3, "n_vehicles": 2, "n_locations": 6}, reference_solve="inline")
    env.reset(seed=11)
    assert solver_calls == {"p3": 0, "p4": 0}
    _, info = run_greedy(env, seed=11)  # the same seed: the same instance again
    assert 0.0 < info["metrics"]["optimality"] <= 1.0
    ref = env.unwrapped.reference
    assert ref.source == "solved" and ref.fingerprint.startswith(env.unwrapped.instance.fingerprint())
    assert sum(solver_calls.values()) >= 1
    solved = dict(solver_calls)
    again = gym.make(env_id, generator={"n_requests": 3, "n_vehicles": 2, "n_locations": 6}, reference_solve="inline")
    _, info2 = run_greedy(again, seed=11)
    assert again.unwrapped.reference.source == "cache" and solver_calls == solved
    assert info2["metrics"] == info["metrics"]
    fresh = gym.make(env_id, instance=env.unwrapped.instance, reference_solve="inline")  # the generated instance, given
    fresh.reset(seed=0)
    assert play_reference_plan(fresh)["metrics"]["optimality"] == 1.0
    assert solver_calls == solved


def test_generator_options_are_checked():
    env = gym.make("Realm-P3-v0", generator={"n_requests": 12, "n_vehicles": 4, "n_locations": 12, "size": "medium"})
    env.reset(seed=3)
    inst = env.unwrapped.instance
    assert (len(inst.locations), inst.n_vehicles, inst.n_requests, inst.size) == (12, 4, 12, "medium")
    with pytest.raises(ValueError, match="generator needs n_requests >= 1"):
        gym.make("Realm-P4-v0", generator={"size": "large"})  # every count is given
    with pytest.raises(ValueError, match="n_locations must be a whole number >= 2 and <= 25, got 30"):
        gym.make("Realm-P3-v0", generator={**SHAPE, "n_locations": 30})
    with pytest.raises(ValueError, match="size must be one of"):
        gym.make("Realm-P3-v0", generator={**SHAPE, "size": "huge"})
    with pytest.raises(TypeError, match=r"generator must be a dict like \{"):
        gym.make("Realm-P4-v0", generator=5)


def test_fixed_counts_leave_the_shipped_draws_alone():
    """The counts only replace draws: without them the generator draws exactly as before."""
    for k in (1, 2, 3):
        shipped = load_p3(f"p3_small_{k:02d}")
        assert generate_p3("small", seed=k, name=shipped.name) == shipped
        assert generate_p4("small", seed=k, name=f"p4_small_{k:02d}") == load_p4(f"p4_small_{k:02d}")
    fixed = generate_p3("large", 4, n_locations=3, n_vehicles=1, n_requests=2)
    assert (len(fixed.locations), fixed.n_vehicles, fixed.n_requests) == (3, 1, 2)
