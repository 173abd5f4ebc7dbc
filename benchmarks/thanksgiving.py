"""Realm-P6-v0 and Realm-P9-v0 in one run: env speed, reference solve time, and the mean
optimality of doing nothing, random legal play, the greedy heuristic and the oracle on the
shipped instances (P9 episodes measure adaptation against the stored value,
``adaptation_reference="oracle"``: no re-solve at the end of an episode; optimality does not
depend on it).

    python benchmarks/thanksgiving.py            # every shipped instance
    python benchmarks/thanksgiving.py --quick    # the first two per size class

Figures depend on the machine (and its load); the optimality means do not.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401
from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.envs.realm.thanksgiving.formats import load_p6, load_p9, shipped_p6_names, shipped_p9_names
from crab_gym.envs.realm.thanksgiving.heuristics import greedy_action
from crab_gym.envs.realm.thanksgiving.references import p6_record, p9_record

NOTHING = {"name": "submit_plan", "arguments": {"pickups": [], "cooking_schedule": []}}


def _episode(env: gym.Env, policy, seed: int) -> tuple[float, int]:
    obs, info = env.reset(seed=seed)
    steps = 0
    while True:
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        steps += 1
        if terminated or truncated:
            return info["metrics"]["optimality"], steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two instances per size class")
    parser.add_argument("--random-episodes", type=int, default=3, help="random episodes per instance")
    args = parser.parse_args(argv)
    for env_id, names, load in (("Realm-P6-v0", shipped_p6_names(), load_p6), ("Realm-P9-v0", shipped_p9_names(), load_p9)):
        if args.quick:
            names = [n for n in names if int(n.rsplit("_", 1)[1]) < 2]
        scores: dict[str, list[float]] = defaultdict(list)
        steps, seconds = 0, 0.0
        for name in names:
            env = gym.make(env_id, instance=name, **({"adaptation_reference": "oracle"} if "P9" in env_id else {}))
            scores["nothing"].append(_episode(env, lambda o, i: NOTHING, 0)[0])
            for seed in range(args.random_episodes):
                tic = time.perf_counter()
                opt, n = _episode(env, RandomPolicy(env, seed=seed), seed)
                seconds += time.perf_counter() - tic
                steps += n
                scores["random"].append(opt)
            scores["greedy"].append(_episode(env, lambda o, i, env=env: greedy_action(env), 0)[0])
            scores["oracle"].append(_episode(env, OraclePolicy(env), 0)[0])
        solve_times: dict[str, list[float]] = defaultdict(list)
        for name in names:
            inst = load(name)
            tic = time.perf_counter()
            (p6_record if env_id == "Realm-P6-v0" else p9_record)(inst)  # with the one-at-a-time afternoon
            solve_times[inst.size or "?"].append(time.perf_counter() - tic)
        print(f"{env_id} ({len(names)} shipped instances)")
        print(f"  random play: {steps / seconds:.0f} steps/s (episode ends included)")
        for size, times in solve_times.items():
            what = "reference (CP-SAT + solo)" if env_id == "Realm-P6-v0" else "reference (hindsight + adaptive chain + greedy + solo)"
            print(f"  {what}, {size}: mean {statistics.mean(times):.2f} s, max {max(times):.2f} s")
        for policy, values in scores.items():
            print(f"  {policy} mean optimality: {np.mean(values):.3f} (min {min(values):.3f}, n={len(values)})")


if __name__ == "__main__":
    main()
