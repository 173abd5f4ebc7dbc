"""Realm-P7-v0 in one run: env steps per second, oracle solve times, and the mean optimality
of sending nothing, random legal play, the greedy heuristic and the oracle policy on the
shipped instances (optimality is the avoidable part: sending nothing 0, the best known plan 1).

    python benchmarks/p7.py                 # every shipped instance
    python benchmarks/p7.py --sizes small   # one size class

Episodes use ``adaptation_reference="oracle"`` so that no solver runs inside them (the steps
per second measure the env); the oracle is timed separately, solving shipped instances
again with their shipped budget (one worker, deterministic limit).
"""

from __future__ import annotations

import argparse
import statistics
import time

from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.envs.realm.disaster_relief.env import DisasterReliefEnv
from crab_gym.envs.realm.disaster_relief.formats import load_p7, shipped_p7_names
from crab_gym.envs.realm.disaster_relief.heuristics import GreedyReliefPolicy
from crab_gym.envs.realm.disaster_relief.oracle import solve_p7


def episode(env: DisasterReliefEnv, policy, seed: int) -> tuple[float, int, float]:
    """``(optimality, steps, seconds)`` of one episode."""
    obs, info = env.reset(seed=seed)
    tic, steps = time.perf_counter(), 0
    while True:
        obs, _, term, trunc, info = env.step(policy(obs, info))
        steps += 1
        if term or trunc:
            return info["metrics"]["optimality"], steps, time.perf_counter() - tic


def nothing(obs, info) -> dict:
    """Send nothing: submit the empty plan."""
    return {"name": "submit_plan", "arguments": {"trips": []}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=["small", "medium", "large"])
    parser.add_argument("--random-episodes", type=int, default=3)
    parser.add_argument("--oracle-per-size", type=int, default=2, help="instances per size to re-solve")
    args = parser.parse_args(argv)
    names = [n for n in shipped_p7_names() if n.split("_")[1] in args.sizes]
    greedy, rand, none, oracle, steps, seconds = {}, {}, {}, {}, 0, 0.0
    for name in names:
        env = DisasterReliefEnv(name, adaptation_reference="oracle")
        none[name] = episode(env, nothing, 0)[0]
        oracle[name] = episode(env, OraclePolicy(env), 0)[0]
        opt, n, s = episode(env, GreedyReliefPolicy(env), 0)
        greedy[name], steps, seconds = opt, steps + n, seconds + s
        scores = []
        for seed in range(args.random_episodes):
            opt, n, s = episode(env, RandomPolicy(env, seed=seed), seed)
            scores.append(opt)
            steps, seconds = steps + n, seconds + s
        rand[name] = statistics.mean(scores)
    print(f"instances: {len(names)} ({', '.join(args.sizes)})")
    print(f"env steps/s (greedy and random episodes, {steps} steps): {steps / seconds:.0f}")
    for size in args.sizes:
        mine = [n for n in names if n.split("_")[1] == size]
        if mine:
            print(f"{size:6s} greedy mean optimality {statistics.mean(greedy[n] for n in mine):.3f}   "
                  f"random mean optimality {statistics.mean(rand[n] for n in mine):.3f}")
    print(f"all    greedy mean optimality {statistics.mean(greedy.values()):.3f}   "
          f"random mean optimality {statistics.mean(rand.values()):.3f}")
    print(f"all    mean optimality: nothing {statistics.mean(none.values()):.3f} < random "
          f"{statistics.mean(rand.values()):.3f} < greedy {statistics.mean(greedy.values()):.3f} < oracle "
          f"{statistics.mean(oracle.values()):.3f}")
    for size in args.sizes:
        for name in [n for n in names if n.split("_")[1] == size][: args.oracle_per_size]:
            inst = load_p7(name)
            tic = time.perf_counter()
            res = solve_p7(inst)
            print(f"oracle {name}: {time.perf_counter() - tic:.1f} s wall, status {res.status}, "
                  f"deterministic limit {res.time_limit_s:g}, gap to bound {(res.cost - res.bound) / res.cost:.2%}")


if __name__ == "__main__":
    main()
