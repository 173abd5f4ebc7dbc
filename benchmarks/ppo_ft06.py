"""MaskablePPO on Realm-P11-v0 (ft06): the makespan it reaches, against SPT and the optimum 55.

Not a test: it trains for minutes. Run::

    python benchmarks/ppo_ft06.py --timesteps 300000 --n-envs 2 --out ppo_ft06.json
    python benchmarks/ppo_ft06.py --timesteps 300000 --n-envs 2 --vector   # the native vector env

The policy acts through ``DiscreteActions`` (one flat index per job) with the env's masks,
under a ``SubprocVecEnv`` when ``--n-envs`` > 1. Training uses the dense ``"makespan"``
reward (minus each step's rise of the makespan lower bound: the return is minus the final
makespan plus a constant); ``--reward-mode default`` trains on the suite's default reward
(sub-goal progress + the terminal optimality ratio). Observations are scaled to about
[0, 1] by a small wrapper (times by the instance horizon, machine ids by their count).

Reported: the deterministic policy's makespan (and the best of ``--samples`` stochastic
roll-outs), each priority dispatching rule's makespan, and the optimum, with the gap to it.

Measured here (2 shared CPU cores, torch 2.13 CPU, seed 0, 2 SubprocVecEnv workers):

=========  ========  ==============  ====  ====  ====  ===  ====  =======
timesteps  training  MaskablePPO     SPT   LPT   MWKR  MOR  FIFO  optimum
=========  ========  ==============  ====  ====  ====  ===  ====  =======
100 000    101 s     63 (+14.5 %)    83    79    67    60   65    55
300 000    277 s     59 (+7.3 %)     83    79    67    60   65    55
=========  ========  ==============  ====  ====  ====  ===  ====  =======
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import crab_gym  # noqa: E402,F401  (registers the ids)
from crab_gym.envs.realm.jobshop.heuristics import RULES, run_rule  # noqa: E402

OPTIMUM = 55


class ScaledJSSPObs(gym.ObservationWrapper):
    """Scale P11's observation to about [0, 1] (MLPs learn badly from raw minutes)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.scales = jssp_scales(env.unwrapped.instance)
        self.observation_space = scaled_space(env.observation_space)

    def observation(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return scale_observation(obs, *self.scales)


def jssp_scales(instance: Any) -> tuple[float, float, float]:
    """(time, duration, machine) scales of an instance: its horizon, longest duration and
    largest machine index."""
    horizon = sum(sum(row) for row in instance.durations)
    return (
        float(max(horizon, 1)),
        float(max(max(max(r) for r in instance.durations), 1)),
        float(max(instance.n_machines - 1, 1)),
    )


def scaled_space(src: gym.spaces.Dict) -> gym.spaces.Dict:
    """The observation space :func:`scale_observation` produces from ``src``."""
    box = lambda shape: gym.spaces.Box(0.0, np.inf, shape, np.float32)  # noqa: E731
    return gym.spaces.Dict(
        {
            "processing_time": box(src["processing_time"].shape),
            "machine": box(src["machine"].shape),
            "done": src["done"],
            "lower_bound": box(src["lower_bound"].shape),
            "machine_available": box(src["machine_available"].shape),
            "action_mask": src["action_mask"],
        }
    )


def scale_observation(obs: dict[str, np.ndarray], time_scale: float, p_scale: float, m_scale: float) -> dict[str, np.ndarray]:
    """One observation, or a batch of them (a leading env axis), scaled."""
    return {
        "processing_time": (obs["processing_time"] / p_scale).astype(np.float32),
        "machine": (obs["machine"] / m_scale).astype(np.float32),
        "done": obs["done"],
        "lower_bound": (obs["lower_bound"] / time_scale).astype(np.float32),
        "machine_available": (obs["machine_available"] / time_scale).astype(np.float32),
        "action_mask": obs["action_mask"],
    }


def vector_training_env(instance: str, n_envs: int, reward_mode: str, seed: int) -> Any:
    """``n_envs`` envs of the native vector env as one SB3 VecEnv, scaled like ScaledJSSPObs."""
    from crab_gym.baselines.sb3_vector import SB3VectorEnv

    venv = gym.make_vec("Realm-P11-v0", num_envs=n_envs, vectorization_mode="vector_entry_point",
                        instance=instance, reward_mode=reward_mode)
    scales = jssp_scales(venv.unwrapped.batch.instances[0])
    sb3 = SB3VectorEnv(venv, lambda obs: scale_observation(obs, *scales), scaled_space(venv.single_observation_space))
    sb3.seed(seed)
    return sb3


def rule_makespans(instance: str) -> dict[str, int]:
    env = gym.make("Realm-P11-v0", instance=instance)
    return {name: int(run_rule(env, rule, seed=0)["metrics"]["makespan"]) for name, rule in RULES.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=300_000)
    parser.add_argument("--n-envs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--instance", default="ft06")
    parser.add_argument("--reward-mode", choices=["makespan", "default"], default="makespan")
    parser.add_argument("--samples", type=int, default=20, help="stochastic roll-outs to take the best of")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--vector", action="store_true",
                        help="train on the native vector env in this process (no SubprocVecEnv)")
    args = parser.parse_args(argv)

    from crab_gym.baselines.sb3 import evaluate_masked, train_maskable_ppo

    env_kwargs = {"instance": args.instance, "reward_mode": args.reward_mode}
    ppo_kwargs = {
        "n_steps": 512,
        "batch_size": 256,
        "n_epochs": 4,
        "gamma": 1.0,
        "gae_lambda": 0.95,
        "ent_coef": 0.01,
        "learning_rate": 3e-4,
        "policy_kwargs": {"net_arch": [128, 128]},
    }
    started = time.perf_counter()
    model = train_maskable_ppo(
        "Realm-P11-v0",
        args.timesteps,
        env_kwargs=env_kwargs,
        wrappers=[ScaledJSSPObs],
        n_envs=args.n_envs,
        subproc=args.n_envs > 1,
        seed=args.seed,
        ppo_kwargs=ppo_kwargs,
        torch_threads=args.threads,
        vec_env=vector_training_env(args.instance, args.n_envs, args.reward_mode, args.seed) if args.vector else None,
    )
    train_s = time.perf_counter() - started
    greedy = evaluate_masked(model, "Realm-P11-v0", env_kwargs=env_kwargs, wrappers=[ScaledJSSPObs], episodes=1)
    sampled = evaluate_masked(
        model, "Realm-P11-v0", env_kwargs=env_kwargs, wrappers=[ScaledJSSPObs],
        episodes=args.samples, deterministic=False, seed=args.seed,
    )
    assert all(e["invalid"] == 0 for e in greedy.episodes + sampled.episodes)
    ppo = int(greedy.episodes[0]["metrics"]["makespan"])
    best = int(min(e["metrics"]["makespan"] for e in sampled.episodes))
    rules = rule_makespans(args.instance)
    result = {
        "instance": args.instance,
        "timesteps": args.timesteps,
        "n_envs": args.n_envs,
        "vector": args.vector,
        "seed": args.seed,
        "reward_mode": args.reward_mode,
        "train_seconds": round(train_s, 1),
        "ppo_makespan": ppo,
        "ppo_best_of_samples": best,
        "samples": args.samples,
        "rules": rules,
        "optimum": OPTIMUM if args.instance == "ft06" else None,
    }
    rows = [("MaskablePPO (deterministic)", ppo), (f"MaskablePPO (best of {args.samples} samples)", best)]
    rows += [(f"{name} rule", mk) for name, mk in rules.items()]
    if result["optimum"]:
        rows.append(("optimum", OPTIMUM))
    how = "native vector env" if args.vector else ("SubprocVecEnv" if args.n_envs > 1 else "DummyVecEnv")
    print(f"\n{args.instance}: {args.timesteps} steps, {args.n_envs} envs ({how}), seed {args.seed}, "
          f"reward {args.reward_mode}, trained in {train_s:.0f} s\n")
    print("| policy | makespan | gap to optimum |")
    print("|---|---|---|")
    for name, mk in rows:
        gap = f"{100 * (mk - OPTIMUM) / OPTIMUM:.1f}%" if result["optimum"] else "-"
        print(f"| {name} | {mk} | {gap} |")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
