"""Realm-P10-v0 figures, all measured in one run: steps per second, oracle solve times, and the
mean optimality of doing nothing, of the greedy heuristic and of random legal play on the
shipped instances.

    python benchmarks/supply_chain.py

Steps/s: random legal actions on p10_small_00 and p10_large_00 for a fixed number of steps
(episode ends included: each ends with the adaptation re-solve, which is counted). Oracle:
the reference's one CP-SAT solve from day 0 with foresight of the disruptions, and the
whole adaptive oracle (a solve, then one per disruption) of every shipped instance, timed
here (the records store no times). Optimality: each policy plays every shipped instance
from ``reset(seed=0)``; random play is seeded; doing nothing submits the empty plan.
Times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from crab_gym.envs.realm.supply_chain import oracle
from crab_gym.envs.realm.supply_chain.env import SupplyChainEnv
from crab_gym.envs.realm.supply_chain.formats import load_p10, shipped_p10_names
from crab_gym.envs.realm.supply_chain.heuristics import greedy_action
from crab_gym.envs.realm.supply_chain.sim import SupplySim

SIZES = ("small", "medium", "large", "late")
#: Doing nothing: the empty plan.
NOTHING = {"name": "submit_plan", "arguments": {"orders": [], "production": []}}


def steps_per_second(name: str, steps: int) -> float:
    env = SupplyChainEnv(name)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    tic = time.perf_counter()
    for _ in range(steps):
        legal = np.flatnonzero(obs["action_mask"])
        obs, _, terminated, _, _ = env.step(env.codec.flat_to_call(int(rng.choice(legal))))
        if terminated:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - tic)


def episode(env: SupplyChainEnv, choose) -> dict:
    obs, info = env.reset(seed=0)
    while True:
        obs, _, terminated, _, info = env.step(choose(obs))
        if terminated:
            return info["metrics"]


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    for name in ("p10_small_00", "p10_large_00"):
        print(f"steps/s, random legal play, {name}: {steps_per_second(name, 2000):.0f}")
    solve, adaptive = {}, {}
    for name in shipped_p10_names():
        inst = load_p10(name)
        size = inst.size
        tic = time.perf_counter()
        oracle.solve_from(SupplySim(inst, []), known=list(inst.disruptions))
        solve.setdefault(size, []).append(time.perf_counter() - tic)
        tic = time.perf_counter()
        oracle._adaptive(SupplySim(inst), None)  # uncached: the time a reference takes
        adaptive.setdefault(size, []).append(time.perf_counter() - tic)
    for size in SIZES:
        print(f"oracle, {size}: foresight solve mean {statistics.mean(solve[size]):.3f} s (max {max(solve[size]):.3f}); "
              f"adaptive oracle mean {statistics.mean(adaptive[size]):.3f} s (max {max(adaptive[size]):.3f})")
    scores: dict[str, dict[str, list[float]]] = {"do-nothing": {}, "greedy": {}, "random": {}}
    for name in shipped_p10_names():
        env = SupplyChainEnv(name, adaptation_reference="oracle")
        size = env.instance.size
        scores["do-nothing"].setdefault(size, []).append(episode(env, lambda obs: NOTHING)["optimality"])
        scores["greedy"].setdefault(size, []).append(episode(env, lambda obs, env=env: greedy_action(env))["optimality"])
        rng = np.random.default_rng(0)
        pick = lambda obs, env=env, rng=rng: env.codec.flat_to_call(int(rng.choice(np.flatnonzero(obs["action_mask"]))))  # noqa: E731
        scores["random"].setdefault(size, []).append(episode(env, pick)["optimality"])
    for policy, by_size in scores.items():
        every = [x for xs in by_size.values() for x in xs]
        sizes = ", ".join(f"{s} {statistics.mean(by_size[s]):.3f}" for s in SIZES)
        print(f"mean optimality, {policy}: {statistics.mean(every):.3f} over {len(every)} instances ({sizes})")


if __name__ == "__main__":
    main()
