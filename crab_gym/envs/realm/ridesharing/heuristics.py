"""Greedy baseline for Realm-P3/P4: the vehicle that decides now takes its soonest legal stop.

"Soonest" is the stop it could serve earliest (arrival, or the window's opening when it would
wait), dropoffs first on a tie. Only stops the action mask allows are considered, so every
constraint holds with the travel times known at each decision; a vehicle with nothing legal
parks. It needs no solver and works unchanged under disruptions (it reads the state as it is).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from crab_gym.envs.realm.common.policy_fit import EnvFit
from crab_gym.envs.realm.ridesharing.sim import RideSim

#: The env :func:`greedy_action` reads (checked once per env class).
FIT = EnvFit(
    "ridesharing.heuristics.greedy_action",
    "crab_gym.envs.realm.ridesharing.env.RideSharingEnv",
    ("Realm-P3-v0", "Realm-P4-v0"),
)


def greedy_choice(sim: RideSim, v: int) -> int | None:
    """Vehicle ``v``'s greedy next stop code in ``sim`` (None: park)."""
    legal = sim.legal_stops(v)
    if not legal:
        return None
    m = sim.matrix(sim.vehicles[v].free)

    def key(stop: int) -> tuple[int, int, int]:
        arrive, service = sim.timing(v, stop, m)
        return (service, 0 if stop % 2 else 1, stop)

    return min(legal, key=key)


def drive_greedily(sim: RideSim) -> RideSim:
    """Play the greedy rule on ``sim`` (in place) until every vehicle parks; disruptions
    still pending are applied as the clock reaches them."""
    while not sim.done:
        sim.advance()
        v = sim.acting()[0]
        stop = greedy_choice(sim, v)
        if stop is None:
            sim.park(v)
        else:
            sim.dispatch(v, stop)
    return sim


def greedy_completion(sim: RideSim) -> dict[int, list[int]]:
    """The stops the greedy rule would add from the state of ``sim`` (on a copy, knowing
    only the disruptions already applied), per vehicle index."""
    trial = sim.copy()
    trial.pending = []
    start = [len(v.route) for v in trial.vehicles]
    drive_greedily(trial)
    return {k: [x.stop for x in veh.route[start[k]:]] for k, veh in enumerate(trial.vehicles)}


def greedy_action(env: gym.Env) -> dict[str, Any]:
    """The greedy tool call for the current state of a Realm-P3/P4 env (wrapped or not)."""
    base = FIT.check(env)
    sim = base.sim
    acting = sim.acting()
    if not acting:
        raise RuntimeError("no vehicle decides now: the episode is over")
    v = acting[0]
    stop = greedy_choice(sim, v)
    if stop is None:
        return {"name": "park", "arguments": {"vehicle": base.vehicle_ids[v]}}
    return {"name": "dispatch", "arguments": {"vehicle": base.vehicle_ids[v], "stop": base.stop_names[stop]}}


def run_greedy(env: gym.Env, *, seed: int | None = None, max_steps: int = 10_000) -> tuple[float, dict[str, Any]]:
    """Play one greedy episode; return (total reward, last info)."""
    env.reset(seed=seed)
    total, info = 0.0, {}
    for _ in range(max_steps):
        _, reward, terminated, truncated, info = env.step(greedy_action(env))
        total += reward
        if terminated or truncated:
            break
    return total, info
