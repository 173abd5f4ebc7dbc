"""Shared-parameter MaskablePPO over P3's vehicles: its mean optimality beside greedy and random.

Not a test: it trains for minutes. Run::

    python benchmarks/ridesharing_marl.py --timesteps 300000 --seed 0

Every shipped small P3 instance (``p3_small_01`` ... ``p3_small_08``: 2 vehicles, 3 to 5
requests) is one copy of ``crab_gym.parallel_env("Realm-P3-v0")``; its vehicles are envs of one
:class:`~crab_gym.baselines.sb3_multiagent.AgentVecEnv` (8 copies x 2 vehicles = 16 envs), so
one MaskablePPO policy drives every vehicle on the shared team reward (the single env's
default reward: sub-goal progress + the final optimality ratio). Observations go through SB3's
``VecNormalize`` (running mean and variance; rewards left as they are).

Then, on the same instances and in the same run, it measures the mean optimality of:

* the trained policy (deterministic, masked), one episode per instance;
* the registered greedy heuristic of Realm-P3-v0 (``ridesharing_greedy``) in the single env;
* a random masked policy: uniform over each vehicle's legal moves in the same vector of
  agents (``noop`` included), ``--random-episodes`` episodes per instance; and the registered
  single-env ``random`` policy, one episode per instance and seed.

An episode that ends without a complete plan (truncated after ``--max-cycles`` joint steps)
scores optimality 0. Timesteps count agent steps (one joint step of a copy = 2 of them).

Measured here (seed 0, 300 000 agent steps, torch 2.13 CPU, 1 thread, an idle 2-core machine;
training 254 s, the whole run about 4.5 min), the policy trained and evaluated on the same 8 instances:

===================================================  ===============
policy                                               mean optimality
===================================================  ===============
MaskablePPO, shared over vehicles (deterministic)    0.972
ridesharing_greedy (single env)                      0.795
random masked, per vehicle (10 episodes/instance)    0.140
random, registered single-env policy                 0.082
===================================================  ===============
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import crab_gym  # noqa: E402,F401  (registers the ids)
from crab_gym.baselines.registry import policy_specs  # noqa: E402
from crab_gym.datasets import list_instances  # noqa: E402

ENV_ID = "Realm-P3-v0"


def small_instances() -> list[str]:
    return sorted(n for n in list_instances("P3") if "_small_" in n)


def single_env_optimality(policy_name: str, instance: str, seed: int) -> float:
    """One episode of a registered policy in the single-agent env; its optimality."""
    env = gym.make(ENV_ID, instance=instance)
    policy = policy_specs()[policy_name].factory(env)
    if hasattr(policy, "seed"):
        policy.seed(seed)
    obs, info = env.reset(seed=seed)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
    env.close()
    return float(info["metrics"].get("optimality", 0.0))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=300_000, help="agent steps of training")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-cycles", type=int, default=100, help="joint steps before an episode is truncated")
    parser.add_argument("--random-episodes", type=int, default=10, help="random episodes per instance")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecNormalize

    from crab_gym.baselines.sb3 import quiet_logger
    from crab_gym.baselines.sb3_multiagent import make_agent_vec_env, model_policy, play_copies, random_policy

    torch.set_num_threads(args.threads)
    instances = small_instances()
    venv = VecNormalize(
        make_agent_vec_env(ENV_ID, instances=instances, seed=args.seed, max_cycles=args.max_cycles),
        norm_obs=True, norm_reward=False, clip_obs=10.0,
    )
    model = MaskablePPO(
        "MlpPolicy", venv, device="cpu", seed=args.seed,
        n_steps=128, batch_size=256, n_epochs=5, gamma=0.99, gae_lambda=0.95, ent_coef=0.01,
        learning_rate=3e-4, policy_kwargs={"net_arch": [128, 128]},
    )
    model.set_logger(quiet_logger())
    started = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    train_s = time.perf_counter() - started

    venv.training = False  # evaluate with the statistics training ended with
    venv.seed(args.seed)
    trained = play_copies(venv, model_policy(model, deterministic=True), episodes=1)
    venv.seed(args.seed)
    rand = play_copies(venv, random_policy(args.seed), episodes=args.random_episodes)
    venv.close()
    greedy = [single_env_optimality("ridesharing_greedy", name, args.seed) for name in instances]
    single_random = [
        single_env_optimality("random", name, args.seed + k) for name in instances for k in range(args.random_episodes)
    ]

    per_instance = {
        name: {
            "maskable_ppo": trained[c].optimality,
            "greedy": greedy[c],
            "random_agents": statistics.fmean(e.optimality for e in rand if e.copy == c),
        }
        for c, name in enumerate(instances)
    }
    rows = [
        ("MaskablePPO, shared over vehicles (deterministic)", [e.optimality for e in trained],
         sum(e.truncated for e in trained)),
        ("ridesharing_greedy (single env)", greedy, 0),
        (f"random masked, per vehicle ({args.random_episodes} episodes/instance)", [e.optimality for e in rand],
         sum(e.truncated for e in rand)),
        (f"random, registered single-env policy ({args.random_episodes} episodes/instance)", single_random, 0),
    ]
    result = {
        "command": "python benchmarks/ridesharing_marl.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "instances": instances,
        "timesteps": args.timesteps,
        "seed": args.seed,
        "train_seconds": round(train_s, 1),
        "mean_optimality": {name: statistics.fmean(values) for name, values, _ in rows},
        "truncated_episodes": {name: n for name, _, n in rows},
        "per_instance": per_instance,
    }
    print(f"\n{result['command']}")
    print(f"{len(instances)} P3 small instances x 2 vehicles = 16 envs; {args.timesteps} agent steps, "
          f"seed {args.seed}, trained in {train_s:.0f} s\n")
    print("| policy | mean optimality | episodes | truncated |")
    print("|---|---|---|---|")
    for name, values, n_trunc in rows:
        print(f"| {name} | {statistics.fmean(values):.3f} | {len(values)} | {n_trunc} |")
    print("\n| instance | MaskablePPO | greedy | random (per vehicle) |")
    print("|---|---|---|---|")
    for name, scores in per_instance.items():
        print(f"| {name} | {scores['maskable_ppo']:.3f} | {scores['greedy']:.3f} | {scores['random_agents']:.3f} |")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
