"""J2/J4 never schedule into the past: an operation placed at a pause, or moved by a strike's
repair, starts no earlier than the start it was first given (which is never before the clock
at which it was placed), a restarted one after the strike that stopped it; and the
independent checker reads the episode's plan (with its ``not_before``) to the env's makespan.
Found by an independent audit: plans resubmitted at pauses ran operations before the clock."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401

#: 5 jobs x 3 machines with three disruptions early in the schedule (our own numbers).
TINY = {"name": "tiny_causal", "machines": 3,
        "jobs": [[[1, 6], [1, 1], [0, 7], [1, 6], [0, 8]], [[1, 3], [2, 5], [2, 3], [1, 8], [0, 3]],
                 [[2, 7], [2, 4], [1, 6]], [[0, 3], [2, 2], [0, 9], [0, 9], [2, 2]], [[0, 5], [1, 9], [2, 1], [0, 7]]],
        "disruptions": [{"type": "power_outage", "start": 9, "duration": 9, "machines": [0, 2]},
                        {"type": "weather_effect", "start": 6, "duration": 6, "operations": [[3, 1]], "severity": 0.3},
                        {"type": "supply_delay", "start": 10, "duration": 3, "resource": "r",
                         "shortage_percentage": 30.0, "jobs": [1]}]}


def _random_plan(base, rng: np.random.Generator) -> list[list[int]]:
    """The placed prefix of every machine, then the rest in a random order that cannot
    deadlock (jobs drawn at random, each taking its next operation)."""
    sim = base.sim
    rows = [list(r) for r in sim.sequences()]
    nxt = list(sim.next_op)
    left = [j for j in range(sim.n_jobs) if nxt[j] < sim.length[j]]
    while left:
        j = left[int(rng.integers(len(left)))]
        rows[base.instance.jobs[j][nxt[j]][0]].append(j)
        nxt[j] += 1
        if nxt[j] == sim.length[j]:
            left.remove(j)
    return rows


def _play(env_id: str, instance, seed: int) -> None:
    env = gym.make(env_id, instance=instance, reference="bound")
    base = env.unwrapped
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    first: dict[tuple[int, int], int] = {}
    terminated = False
    for _ in range(400):
        clock = int(base.sim.now)
        if rng.random() < 0.5:
            action = {"name": "submit_plan", "arguments": {"sequence": _random_plan(base, rng)}}
        else:
            action = (0, {"job": int(rng.choice(np.flatnonzero(base.action_masks()[: base.instance.n_jobs])))})
        _, _, terminated, _, info = env.step(action)
        assert info["valid"], info["error"]
        for op in base.sim.operations():
            key = (op["job"], op["op"])
            if key not in first:
                assert op["start"] >= clock, (key, op, clock)  # placed now: not before the clock
                first[key] = op["start"]
            assert op["start"] >= first[key], (key, op, first[key])  # repairs push right only
        if terminated:
            break
    assert terminated
    for r in info["solution"]["restarted"]:  # a restarted operation runs after the strike
        start = first_start = base.sim.start[r["job"]][r["op"]]
        assert start >= r["stopped"] and first_start >= r["stopped"]
    verdict = base.check_plan()
    assert verdict.feasible and verdict.cost == info["metrics"]["makespan"]


@pytest.mark.parametrize("env_id", ["Realm-J2-v0", "Realm-J4-v0"])
@pytest.mark.parametrize("seed", range(12))
def test_plans_at_pauses_and_repairs_never_run_into_the_past(env_id, seed):
    _play(env_id, {**TINY, "problem": env_id[6:8]}, seed)


@pytest.mark.parametrize("name", ["j4_small_02", "j4_small_04", "j4_medium_04", "j2_small_03"])
def test_the_same_on_shipped_instances(name):
    env_id = "Realm-J4-v0" if name.startswith("j4") else "Realm-J2-v0"
    for seed in range(3):
        _play(env_id, name, seed)
