"""Speed of Realm-J3-v0 at 200 jobs x 50 machines (j3_large_00): steps per second with random
legal play, reset time, and the vector env (N=256) against the single env, in one run.

    python benchmarks/jobshop_j3.py [--seconds 3] [--repeats 3] [--envs 256] [--png j3.png]

A random legal job is chosen from the observation's mask with the same cheap code for every
env (uniform over the legal jobs), and each env is timed both
on ``step()`` alone (as benchmarks/jobshop_vector.py does for P11) and with its choice (as
benchmarks/jobshop_speed.py does); each ratio compares like with like. Best of ``--repeats``. Realm-P11-v0
on ta01 is measured in the same run as a reference point. ``--png`` saves an ``rgb_array``
render of a finished J3 episode.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401  (registers the ids)


def single(env_id: str, instance: str, seconds: float, repeats: int) -> tuple[float, float, float]:
    """(best steps/s counting ``step()`` only, best steps/s with the random legal choice, best
    reset ms) of ``gym.make(env_id)``."""
    env = gym.make(env_id, instance=instance)
    rnd = np.random.default_rng(0).random
    clock = time.perf_counter
    best_only, best, best_reset = 0.0, 0.0, float("inf")
    for _ in range(repeats):
        steps, in_step, t0 = 0, 0.0, clock()
        while True:
            r0 = clock()
            obs, _ = env.reset()
            best_reset = min(best_reset, clock() - r0)
            done = False
            while not done:
                legal = np.flatnonzero(obs["action_mask"])
                action = (0, {"job": int(legal[int(rnd() * len(legal))])})
                s0 = clock()
                obs, _, done, _, _ = env.step(action)
                in_step += clock() - s0
                steps += 1
            if clock() - t0 >= seconds:
                break
        best_only = max(best_only, steps / in_step)
        best = max(best, steps / (clock() - t0))
    return best_only, best, best_reset * 1000


def random_legal(masks: np.ndarray, rng: np.random.Generator, tries: int = 4) -> np.ndarray:
    """One legal job per row of ``masks``, uniformly: ``tries`` uniform draws per row, the
    first legal one taken (rejection sampling); a row whose draws all miss takes its n-th
    legal job for a uniform n (a cumulative count, over those rows only)."""
    rows = np.arange(len(masks))
    picks = rng.integers(0, masks.shape[1], size=(len(masks), tries))
    legal = masks[rows[:, None], picks]
    actions = picks[rows, legal.argmax(axis=1)]
    missed = np.flatnonzero(~legal.any(axis=1))
    if len(missed):
        counts = masks[missed].cumsum(axis=1)
        nth = (rng.random(len(missed)) * counts[:, -1]).astype(np.int64)
        actions[missed] = np.argmax(counts > nth[:, None], axis=1)
    return actions


def vector(env_id: str, instance: str, n: int, seconds: float, copy: bool = True) -> tuple[float, float]:
    """(env-steps/s counting ``step()`` only, env-steps/s with the random legal choice) of the
    id's vector env with ``n`` envs (the choice: :func:`random_legal`, uniform over each
    env's legal jobs, as the single env's)."""
    envs = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", instance=instance, copy=copy)
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    steps, in_step, t0 = 0, 0.0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        actions = random_legal(envs.unwrapped.action_masks(), rng)
        s0 = time.perf_counter()
        envs.step(actions)
        in_step += time.perf_counter() - s0
        steps += n
    return steps / in_step, steps / (time.perf_counter() - t0)


def save_render(path: str) -> None:
    from crab_gym.envs.realm.jobshop.variants.heuristics import GreedyReplanner

    env = gym.make("Realm-J3-v0", instance="j3_large_00", render_mode="rgb_array")
    policy = GreedyReplanner(env)
    obs, info = env.reset(seed=0)
    env.step(policy(obs, info))
    from PIL import Image

    Image.fromarray(env.render()).save(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--png", default=None)
    args = parser.parse_args(argv)
    rows: list[tuple[str, float, float, float | None]] = []
    j3_only, j3, j3_reset = single("Realm-J3-v0", "j3_large_00", args.seconds, args.repeats)
    rows.append(("Realm-J3-v0 (200x50, j3_large_00), gym.make", j3_only, j3, j3_reset))
    p11_only, p11, p11_reset = single("Realm-P11-v0", "ta01", args.seconds, args.repeats)
    rows.append(("Realm-P11-v0 (15x15, ta01), same run", p11_only, p11, p11_reset))
    for copy in (True, False):
        only, chosen = max(vector("Realm-J3-v0", "j3_large_00", args.envs, args.seconds, copy) for _ in range(args.repeats))
        rows.append((f"Realm-J3-v0 vector env, N={args.envs}{'' if copy else ', copy=False'}", only, chosen, None))
    print("| env | steps/s, step() only | x single J3 | steps/s with the choice | x single J3 | reset ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, only, chosen, reset in rows:
        print(f"| {name} | {only:,.0f} | {only / j3_only:.2f} | {chosen:,.0f} | {chosen / j3:.2f} | "
              f"{'' if reset is None else f'{reset:.2f}'} |")
    if args.png:
        save_render(args.png)


if __name__ == "__main__":
    main()
