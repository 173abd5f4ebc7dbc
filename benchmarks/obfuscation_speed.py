"""What renaming costs: random legal play on each REALM id, plain and obfuscated, in one run.

Random legal moves as tool calls (the calls an LLM sends, so each goes through the renaming
both ways), whole episodes, on each id's default instance; per id the steps/s of the plain env
and of ``make_obfuscated(id)`` and their ratio, and the time to draw the names and rebuild the
tools for an instance (at construction). Figures depend on the machine: compare the columns of
one run, not runs.

Usage: python benchmarks/obfuscation_speed.py [--seconds 2] [ids...]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.realm.common.obfuscation import make_obfuscated
from crab_gym.envs.registration import realm_ids


def rate(env: gym.Env, seconds: float, seed: int = 0) -> float:
    """Steps per second of random legal tool calls over whole episodes (resets included)."""
    rng = np.random.default_rng(seed)
    base = env.unwrapped
    steps, episode, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds or episode == 0:
        env.reset(seed=seed + episode)
        episode += 1
        done = False
        while not done:
            legal = np.flatnonzero(base.action_masks())
            if legal.size == 0:
                break
            call = base.codec.flat_to_call(int(rng.choice(legal)))
            _, _, terminated, truncated, _ = env.step(call)
            steps += 1
            done = terminated or truncated
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("ids", nargs="*", default=[i for i in realm_ids() if i.startswith("Realm-P")])
    args = parser.parse_args()
    print("| env | plain steps/s | obfuscated steps/s | ratio | names and tools (ms) |")
    print("|---|---:|---:|---:|---:|")
    for env_id in args.ids:
        plain = rate(gym.make(env_id), args.seconds)
        tic = time.perf_counter()
        env = make_obfuscated(env_id)
        build_ms = 1000 * (time.perf_counter() - tic)
        renamed = rate(env, args.seconds)
        print(f"| {env_id} | {plain:,.0f} | {renamed:,.0f} | {renamed / plain:.2f} | {build_ms:.1f} |")


if __name__ == "__main__":
    main()
