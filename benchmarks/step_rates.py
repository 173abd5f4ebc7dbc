"""Every REALM id side by side, in one run: what an RL user trains at.

Random legal play through ``DiscreteActions`` (the flat, masked action space MaskablePPO
uses) on each id's default instance, whole episodes, with the env's default settings (no
solver inside ``step()``: an env with disruptions defers its adaptation solve to the
runner). Per id: steps/s over whole episodes (resets included), the median ordinary step,
the mean last step of an episode, the mean reset, and the rate against P1 (the in-run
reference). Figures depend on the machine: compare rows of one run, not runs.

Usage: python benchmarks/step_rates.py [--seconds 3] [ids...]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.registration import realm_ids
from crab_gym.wrappers import DiscreteActions


def measure(env_id: str, seconds: float, seed: int = 0) -> dict[str, float]:
    """Play random legal episodes for about ``seconds``; the timings of every step."""
    env = DiscreteActions(gym.make(env_id))
    rng = np.random.default_rng(seed)
    ordinary, last, resets = [], [], []
    steps, start = 0, time.perf_counter()
    episode = 0
    while time.perf_counter() - start < seconds or episode == 0:
        tic = time.perf_counter()
        env.reset(seed=seed + episode)
        resets.append(time.perf_counter() - tic)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            legal = np.flatnonzero(mask)
            action = int(rng.choice(legal)) if legal.size else 0
            tic = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            took = time.perf_counter() - tic
            done = terminated or truncated
            (last if done else ordinary).append(took)
            steps += 1
        episode += 1
    total = time.perf_counter() - start
    env.close()
    return {
        "steps_per_s": steps / total,
        "episodes": episode,
        "ordinary_ms": 1e3 * statistics.median(ordinary) if ordinary else float("nan"),
        "last_ms": 1e3 * statistics.fmean(last),
        "reset_ms": 1e3 * statistics.fmean(resets),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ids", nargs="*", help="REALM ids (default: all; P1 always runs first)")
    parser.add_argument("--seconds", type=float, default=3.0, help="play time per id (default 3)")
    args = parser.parse_args(argv)
    ids = args.ids or realm_ids()
    ids = ["Realm-P1-v0", *[i for i in ids if i != "Realm-P1-v0"]]
    print("| env | steps/s | x P1 | episodes | median step (ms) | mean last step (ms) | mean reset (ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    reference = None
    for env_id in ids:
        m = measure(env_id, args.seconds)
        reference = reference or m["steps_per_s"]
        print(f"| {env_id} | {m['steps_per_s']:,.0f} | {m['steps_per_s'] / reference:.2f} | {m['episodes']} | "
              f"{m['ordinary_ms']:.3f} | {m['last_ms']:.2f} | {m['reset_ms']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
