"""The native vector env of Realm-P11-v0 against the single env, in one run.

    python benchmarks/jobshop_vector.py [--instance ta01] [--sizes 1,16,256,1024,4096]
                                    [--seconds 2] [--repeats 3] [--ppo]

Env-steps per second of ``gym.make_vec(..., vectorization_mode="vector_entry_point")`` at each
N, with copied observations (the default) and with ``copy=False`` (read-only views), beside
the single env (``gym.make``, fast-path ``dispatch`` elements) measured in the same run.
Only ``step()`` is timed, for both: the actions (random legal jobs, drawn from the masks
by the same cheap rule) are chosen outside the timed region. Autoresets are included. Best of
``--repeats`` runs, each at least ``--seconds`` long; ``--timer cpu`` counts this process's CPU
time instead of wall time. On a machine shared with other work, run it at real-time priority
(``chrt -f 50 python benchmarks/jobshop_vector.py``): figures still move with the other work's
memory traffic, so compare the ratios, which are measured side by side.

``--ppo`` also times one MaskablePPO iteration on N=1024 envs through
:class:`~crab_gym.baselines.sb3_vector.SB3VectorEnv` (16 steps per env: a 16 384-sample
batch, one epoch of minibatches of 4 096): the rollout (env steps plus policy forward passes)
against the update (the learner), and the share of the rollout that is the env's own.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401  (registers Realm-P11-v0)

ENV_ID = "Realm-P11-v0"


def best_rate(run: Callable[[float], tuple[int, float]], seconds: float, repeats: int) -> float:
    """The best env-steps/s over ``repeats`` runs of ``run(seconds) -> (steps, timed seconds)``."""
    return max(steps / elapsed for steps, elapsed in (run(seconds) for _ in range(repeats)))


def single_env_run(instance: str, clock: Callable[[], float]) -> Callable[[float], tuple[int, float]]:
    env = gym.make(ENV_ID, instance=instance)
    rng = np.random.default_rng(0)

    def run(seconds: float) -> tuple[int, float]:
        steps, timed = 0, 0.0
        while steps == 0 or timed < seconds:
            obs, _ = env.reset()
            done = False
            while not done:
                legal = np.flatnonzero(obs["action_mask"])
                action = (0, {"job": int(legal[int(rng.random() * len(legal))])})
                t = clock()
                obs, _, done, _, _ = env.step(action)
                timed += clock() - t
                steps += 1
        return steps, timed

    return run


def vector_env_run(
    instance: str, n: int, clock: Callable[[], float], copy: bool = True
) -> Callable[[float], tuple[int, float]]:
    venv = gym.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", instance=instance, copy=copy)
    rng = np.random.default_rng(0)
    venv.reset(seed=0)

    def run(seconds: float) -> tuple[int, float]:
        steps, timed = 0, 0.0
        while steps == 0 or timed < seconds:
            for _ in range(64):
                keys = rng.random(venv.unwrapped.batch.mask.shape)
                actions = (keys * venv.unwrapped.action_masks()).argmax(axis=1)
                t = clock()
                venv.step(actions)
                timed += clock() - t
                steps += n
        return steps, timed

    return run


def ppo_iteration(instance: str, n: int = 1024, n_steps: int = 16) -> dict[str, float]:
    """Seconds of one MaskablePPO rollout and of its update on ``n`` envs, and of the env
    steps alone over as many env-steps."""
    import torch
    from sb3_contrib import MaskablePPO

    from crab_gym.baselines.sb3 import quiet_logger
    from crab_gym.baselines.sb3_vector import SB3VectorEnv

    torch.set_num_threads(1)
    venv = SB3VectorEnv(gym.make_vec(ENV_ID, num_envs=n, instance=instance, reward_mode="makespan"))
    model = MaskablePPO(
        "MultiInputPolicy", venv, n_steps=n_steps, batch_size=4096, n_epochs=1, device="cpu", seed=0,
        policy_kwargs={"net_arch": [128, 128]},
    )
    model.set_logger(quiet_logger())
    t = time.perf_counter()
    model.learn(n * n_steps)  # one rollout, one update
    both = time.perf_counter() - t
    t = time.perf_counter()
    model.train()  # the same update again, on the same buffer
    update = time.perf_counter() - t
    env_only = vector_env_run(instance, n, time.perf_counter)(0.0)  # 64 steps
    env_seconds = env_only[1] * (n * n_steps) / env_only[0]
    return {"rollout_s": both - update, "update_s": update, "env_s": env_seconds, "samples": n * n_steps}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="ta01")
    parser.add_argument("--sizes", default="1,16,256,1024,4096")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timer", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--ppo", action="store_true", help="also time one MaskablePPO iteration at N=1024")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.timer == "wall" else time.process_time
    sizes = [int(s) for s in args.sizes.split(",")]

    single = best_rate(single_env_run(args.instance, clock), args.seconds, args.repeats)
    print(f"{args.instance}, {args.timer} time, best of {args.repeats} x {args.seconds:g} s, step() only")
    print(f"{'env':<24}{'env-steps/s':>14}{'x single':>10}{'us per batched step':>22}")
    print(f"{'single (gym.make)':<24}{single:>14,.0f}{1.0:>10.1f}{1e6 / single:>22.1f}")
    for n in sizes:
        for copy in (True, False):
            rate = best_rate(vector_env_run(args.instance, n, clock, copy), args.seconds, args.repeats)
            label = f"vector N={n}" + ("" if copy else " copy=False")
            print(f"{label:<24}{rate:>14,.0f}{rate / single:>10.1f}{1e6 * n / rate:>22.1f}")
    if args.ppo:
        r = ppo_iteration(args.instance)
        print(
            f"\nMaskablePPO, N=1024, {r['samples']} samples: rollout {r['rollout_s']:.2f} s "
            f"(of which env steps {r['env_s']:.2f} s), update {r['update_s']:.2f} s -> the "
            f"{'learner' if r['update_s'] + r['rollout_s'] - r['env_s'] > r['env_s'] else 'env'} is the bottleneck"
        )


if __name__ == "__main__":
    main()
