"""How much does the CrabEnv machinery (parse, validate, graph, info) cost per step?

Runs the same lamp-switching dynamics three ways in one process and prints steps/s:
  * reference: a bare ``gymnasium.Env`` with a ``Discrete`` action and no validation;
  * CrabEnv stepped with space elements (what an RL policy sends);
  * CrabEnv stepped with tool-call dicts (what an LLM adapter sends).

Usage: python benchmarks/core_step_overhead.py [--steps 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.core.toy_env import N_LAMPS, LampsEnv  # noqa: E402


class BareLamps(gym.Env):
    """The reference: same dynamics, no schema, no validation, no evaluator graph."""

    def __init__(self) -> None:
        self.action_space = gym.spaces.Discrete(N_LAMPS + 1)
        self.observation_space = gym.spaces.MultiBinary(N_LAMPS)
        self.lit = np.zeros(N_LAMPS, dtype=bool)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.lit[:] = False
        return self.lit.astype(np.int8), {}

    def step(self, action):
        if action == N_LAMPS:
            self.lit[:] = False
        else:
            self.lit[action] = True
        done = bool(self.lit.all())
        return self.lit.astype(np.int8), float(done), done, False, {}


def measure(env, actions, steps: int) -> float:
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(steps):
        _, _, terminated, _, _ = env.step(actions[i % len(actions)])
        if terminated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    flat = rng.integers(0, N_LAMPS + 1, size=1000)
    crab = LampsEnv()
    elements = [(np.int64(1), {}) if a == N_LAMPS else (np.int64(0), {"lamp": np.int64(a)}) for a in flat]
    calls = [crab.codec.decode(e) for e in elements]
    ref = measure(BareLamps(), list(flat), args.steps)
    rows = [
        ("bare gymnasium.Env (reference)", ref),
        ("CrabEnv, space elements", measure(crab, elements, args.steps)),
        ("CrabEnv, tool-call dicts", measure(LampsEnv(), calls, args.steps)),
    ]
    print(f"{'variant':34s} {'steps/s':>10s} {'vs reference':>13s}")
    for name, rate in rows:
        print(f"{name:34s} {rate:10.0f} {rate / ref:12.2f}x")


if __name__ == "__main__":
    main()
