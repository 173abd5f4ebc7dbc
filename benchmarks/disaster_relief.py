"""Realm-P7-v0 in one run: env steps per second, oracle solve times, and the mean optimality
of sending nothing, random legal play, the greedy heuristic and the oracle policy on the
shipped instances (optimality is the avoidable part: sending nothing 0, the best known plan 1).

    python benchmarks/disaster_relief.py                 # every shipped instance
    python benchmarks/disaster_relief.py --sizes small   # one size class
    python benchmarks/disaster_relief.py --adaptation 20 # the adaptation re-solve: uncached vs cached, side by side

Episodes use ``adaptation_reference="oracle"`` so that no solver runs inside them (the steps
per second measure the env); the oracle is timed separately, solving shipped instances
again with their shipped budget (one worker, deterministic limit).

``--adaptation N`` records the state at the first disruption of N random episodes (default
instance, seeds 0..N-1: what ``crab-gym run --policy random`` meets) and times the adaptation
yardstick on those same states three ways: as before the cache (every distinct state solved,
memoised for the run only), with the cache empty (a first run), and with it filled (a run
whose states were met before, read from disk); it checks the three give the same records.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import tempfile
import time

from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.envs.realm.disaster_relief.adaptation import CACHE, adaptive_reference, state_key
from crab_gym.envs.realm.disaster_relief.env import DisasterReliefEnv
from crab_gym.envs.realm.disaster_relief.formats import load_p7, shipped_p7_names
from crab_gym.envs.realm.disaster_relief.heuristics import GreedyReliefPolicy
from crab_gym.envs.realm.disaster_relief.oracle import solve_p7
from crab_gym.envs.realm.disaster_relief.sim import ReliefSim


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


def recorded_states(episodes: int) -> list[ReliefSim]:
    """The state when the first disruption struck, in ``episodes`` random episodes."""
    env, states = DisasterReliefEnv(), []
    for seed in range(episodes):
        episode(env, RandomPolicy(env, seed=seed), seed)
        if env._snapshot is not None:
            states.append(env._snapshot)
    return states


def timed(solve, states: list[ReliefSim]) -> tuple[float, list[dict]]:
    tic = time.perf_counter()
    out = [solve(s) for s in states]
    return time.perf_counter() - tic, out


def compare_adaptation(episodes: int) -> None:
    """The adaptation yardstick on recorded states: before the cache, cache empty, cache filled."""
    states = recorded_states(episodes)
    memo: dict[str, dict] = {}

    def uncached(s: ReliefSim) -> dict:  # the search as before, memoised in this run only
        key = state_key(s)
        if key not in memo:
            memo[key] = adaptive_reference(s, cache=False)
        return memo[key]

    t_old, old = timed(uncached, states)
    saved = os.environ.get("CRAB_GYM_CACHE_DIR")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["CRAB_GYM_CACHE_DIR"] = folder
        CACHE.clear_memory()
        t_cold, cold = timed(adaptive_reference, states)
        CACHE.clear_memory()  # as a new process: the records come from disk
        t_warm, warm = timed(adaptive_reference, states)
    if saved is None:
        os.environ.pop("CRAB_GYM_CACHE_DIR")
    else:
        os.environ["CRAB_GYM_CACHE_DIR"] = saved
    statuses = collections.Counter(s for rec in memo.values() for s in rec["statuses"])
    print(f"adaptation yardstick on {len(states)} recorded states ({len(memo)} distinct), "
          f"{sum(statuses.values())} CP-SAT re-solves: {dict(statuses)}")
    for label, seconds in (("before (no cache)", t_old), ("cache empty", t_cold), ("cache filled", t_warm)):
        print(f"  {label:18s} {seconds:7.2f} s   {1000 * seconds / len(states):7.1f} ms/state   "
              f"x{t_old / seconds:.1f}")
    print(f"  same records: {old == cold == warm}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=["small", "medium", "large"])
    parser.add_argument("--random-episodes", type=int, default=3)
    parser.add_argument("--oracle-per-size", type=int, default=2, help="instances per size to re-solve")
    parser.add_argument("--adaptation", type=int, default=0, metavar="N",
                        help="only time the adaptation yardstick on N random episodes' states")
    args = parser.parse_args(argv)
    if args.adaptation:
        compare_adaptation(args.adaptation)
        return
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
