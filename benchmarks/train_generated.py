"""MaskablePPO on freshly generated instances: the training recipe, and what the deferred
reference solve buys.

Every reset draws a new instance (``generator=``), so no reference is shipped: with the default
``reference_solve="deferred"`` no solver runs while training, with ``"inline"`` each new
instance's reference is solved inside the last ``step()`` of its episode (for the metrics; the
dense ``reward_mode="makespan"`` used here needs no reference at all: minus each step's rise of
the makespan's lower bound). Both train for the same steps in the same run;
then the deferred-trained policy is evaluated on fresh instances against the uniform random
policy and the MWKR rule, its optimality measured against the solved references (the
evaluation's ``finished_metrics`` solves them after each episode).

Not a test: it trains for a few minutes. Run::

    python benchmarks/train_generated.py --timesteps 20000 --episodes 20

Figures depend on the machine: compare the rows of one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import crab_gym  # noqa: E402,F401 - registers the ids
from crab_gym.baselines.random_policy import RandomPolicy  # noqa: E402
from crab_gym.baselines.sb3 import evaluate_masked, train_maskable_ppo  # noqa: E402
from crab_gym.envs.realm.jobshop.heuristics import MWKR  # noqa: E402
from crab_gym.evaluation.episode_runner import finished_metrics  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ppo_ft06 import ScaledJSSPObs  # noqa: E402 - times and ids scaled to about [0, 1]

ENV_ID = "Realm-P11-v0"
GENERATOR = {"n_jobs": 6, "n_machines": 6}
PPO = {"n_steps": 512, "batch_size": 128, "learning_rate": 3e-4}


def train(mode: str, timesteps: int, seed: int) -> tuple[Any, float]:
    """A model trained with ``reference_solve=mode``, and the training's wall time."""
    start = time.perf_counter()
    kwargs = {"generator": GENERATOR, "reference_solve": mode, "reward_mode": "makespan"}
    model = train_maskable_ppo(ENV_ID, timesteps, env_kwargs=kwargs, wrappers=[ScaledJSSPObs],
                               seed=seed, ppo_kwargs=PPO, torch_threads=1)
    return model, time.perf_counter() - start


def rule_optimality(policy_for: Any, episodes: int, seed: int) -> float:
    """Mean solved optimality of a policy over ``episodes`` fresh instances (seeds from ``seed``)."""
    values = []
    env = gym.make(ENV_ID, generator=GENERATOR)
    policy = policy_for(env)
    for k in range(episodes):
        obs, info = env.reset(seed=seed + k)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy(obs, info))
            done = terminated or truncated
        values.append(finished_metrics(env, info)["optimality"])
    return statistics.fmean(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=20_000)
    parser.add_argument("--episodes", type=int, default=20, help="fresh instances for the evaluation")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:  # a fresh cache: nothing solved before this run
        os.environ["CRAB_GYM_CACHE_DIR"] = cache
        deferred, t_deferred = train("deferred", args.timesteps, args.seed)
        _, t_inline = train("inline", args.timesteps, args.seed)
        evaluation = evaluate_masked(deferred, ENV_ID, env_kwargs={"generator": GENERATOR}, wrappers=[ScaledJSSPObs],
                                     episodes=args.episodes, seed=10_000)
        ppo = evaluation.mean_metrics["optimality"]
        random = rule_optimality(lambda env: RandomPolicy(env, seed=args.seed), args.episodes, 10_000)
        mwkr = rule_optimality(lambda env: MWKR, args.episodes, 10_000)
    print(f"{ENV_ID}, generator={GENERATOR}, {args.timesteps} PPO steps each, seed {args.seed}\n")
    print("| reference_solve | training (s) | steps/s |")
    print("|---|---:|---:|")
    for mode, seconds in (("deferred", t_deferred), ("inline", t_inline)):
        print(f"| {mode} | {seconds:.1f} | {args.timesteps / seconds:,.0f} |")
    print(f"\nmean optimality on {args.episodes} fresh instances (against the solved references):\n")
    print("| policy | optimality |")
    print("|---|---:|")
    for name, value in (("MaskablePPO (deferred training)", ppo), ("MWKR", mwkr), ("random", random)):
        print(f"| {name} | {value:.3f} |")
    return 0


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    sys.exit(main())
