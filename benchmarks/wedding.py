"""Realm-P5-v0 / Realm-P8-v0 in one run: env speed, oracle solve time, baseline optimality.

    python benchmarks/wedding.py [--episodes 10] [--seconds 3]

Prints, for each id: steps/s of random legal play (mask-uniform actions, whole episodes, at
least ``--seconds``; P8 with ``adaptation_reference="oracle"``, so that no re-solve runs when
an episode ends); the routing oracle's and CP-SAT's solve times on the first shipped small,
medium and large P5 instance (one worker each; CP-SAT with its deterministic limits); and the
mean optimality of the greedy heuristic and of random legal play over the first
``--episodes`` shipped instances (references precomputed, so no solver runs there).
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401
from crab_gym.envs.realm.wedding.formats import load_p5, shipped_p5_names, shipped_p8_names
from crab_gym.envs.realm.wedding.heuristics import greedy_action
from crab_gym.envs.realm.wedding.oracle import solve_p5
from crab_gym.envs.realm.wedding.oracle_cpsat import solve_cpsat

ENTRY = {"Realm-P5-v0": "crab_gym.envs.realm.wedding.env:WeddingEnv",
         "Realm-P8-v0": "crab_gym.envs.realm.wedding.env_disruptions:WeddingDisruptionEnv"}


def episode(env: gym.Env, choose, seed: int) -> tuple[int, dict]:
    obs, info = env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        obs, _, done, _, info = env.step(choose(obs))
        steps += 1
    return steps, info


def random_chooser(env: gym.Env, rng: np.random.Generator):
    codec = env.unwrapped.codec
    return lambda obs: codec.flat_to_call(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    for env_id, entry in ENTRY.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry)
    for env_id, names in (("Realm-P5-v0", shipped_p5_names()), ("Realm-P8-v0", shipped_p8_names())):
        # P8 with adaptation_reference="oracle": the default ("resolve") runs the adaptive
        # oracle from each episode's own state when it ends, which a speed figure should not count
        fast = {"adaptation_reference": "oracle"} if env_id == "Realm-P8-v0" else {}
        env = gym.make(env_id, instance=names[names.index(f"{env_id[6:8].lower()}_medium_00")], **fast)
        rng = np.random.default_rng(0)
        steps, t0, seed = 0, time.perf_counter(), 0
        while time.perf_counter() - t0 < args.seconds:
            n, _ = episode(env, random_chooser(env, rng), seed)
            steps, seed = steps + n, seed + 1
        rate = steps / (time.perf_counter() - t0)
        greedy, rand = [], []
        for name in names[: args.episodes]:
            env = gym.make(env_id, instance=name)
            greedy.append(episode(env, lambda obs, e=env: greedy_action(e), 0)[1]["metrics"]["optimality"])
            rand.append(episode(env, random_chooser(env, np.random.default_rng(1)), 0)[1]["metrics"]["optimality"])
        print(f"{env_id}: {rate:.0f} steps/s (random legal play, {seed} episodes on {env_id[6:8].lower()}_medium_00); "
              f"mean optimality over {len(greedy)} shipped instances: greedy {np.mean(greedy):.3f}, "
              f"random {np.mean(rand):.3f}")
    for size in ("small", "medium", "large"):
        inst = load_p5(f"p5_{size}_00")
        t0 = time.perf_counter()
        routing = solve_p5(inst)
        t1 = time.perf_counter()
        cp = solve_cpsat(inst)
        t2 = time.perf_counter()
        print(f"oracle p5_{size}_00: RoutingModel {routing.cost} in {t1 - t0:.1f} s; CP-SAT {cp.cost} "
              f"({cp.status}, bound {cp.bound:g}, {cp.time_limit_s:g} deterministic s) in {t2 - t1:.1f} s")


if __name__ == "__main__":
    main()
