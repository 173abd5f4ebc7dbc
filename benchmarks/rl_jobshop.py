"""A trained dispatcher on Taillard's instances, beside the dispatching rules and published anchors.

Plays a ``CandidatePolicy`` model (default: the shipped one, ``crab-gym run --policy trained``)
greedily and sampled (best of ``--samples``) on ta01-ta10 (15x15), ta21-ta30 (20x20) and
ta41-ta50 (30x20), and reports the mean gap to the best known makespans. The same run plays
the project's rules on all legal jobs and on the non-delay set (``--rules``), which explains why
the published MWKR is ahead of the project's: the literature's rules choose among the operations
that can start earliest. Published anchors on ta01-ta10 are quoted from the papers, not measured.

Not a test. Run::

    python benchmarks/rl_jobshop.py [--model runs/p11/model.zip] [--samples 32] [--rules]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import crab_gym  # noqa: E402,F401 - registers the ids
from crab_gym.envs.realm.jobshop.features import non_delay_mask  # noqa: E402
from crab_gym.envs.realm.jobshop.heuristics import RULES  # noqa: E402

SETS = {"ta01-ta10 (15x15)": range(1, 11), "ta21-ta30 (20x20)": range(21, 31), "ta41-ta50 (30x20)": range(41, 51)}
#: Mean gaps on ta01-ta10 as published (greedy unless said): L2D (Zhang et al., NeurIPS 2020),
#: its MWKR and SPT baselines, ScheduleNet (Park et al., 2021), SPN with 512 samples (Chen et al.).
ANCHORS_15x15 = {"L2D": 25.5, "MWKR (L2D's table)": 19.5, "SPT (L2D's table)": 25.9, "ScheduleNet": 15.4,
                 "SPN x512": 7.8}


def _gap(env: gym.Env) -> float:
    base = env.unwrapped
    return 100.0 * (base.schedule.makespan / base.reference.value - 1.0)


def play_model(model, instance: str, *, deterministic: bool, seed: int) -> float:
    from crab_gym.baselines.rl_train import play_optimality

    env = gym.make("Realm-P11-v0", instance=instance)
    play_optimality(model, env, seed, deterministic)
    return _gap(env)


def play_rule(rule, instance: str, *, non_delay: bool) -> float:
    env = gym.make("Realm-P11-v0", instance=instance)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        legal = non_delay_mask(obs) if non_delay else obs["action_mask"].astype(bool)
        job = int(np.argmin(np.where(legal, rule.scores(obs), np.inf)))
        obs, _, terminated, truncated, _ = env.step({"name": "dispatch", "arguments": {"job": job}})
        done = terminated or truncated
    return _gap(env)


def model_table(model, samples: int) -> None:
    print(f"| instances | greedy gap | best of {samples} | CPU s |")
    print("|---|---:|---:|---:|")
    for label, numbers in SETS.items():
        names = [f"ta{i:02d}" for i in numbers]
        start = time.process_time()
        greedy = statistics.fmean(play_model(model, n, deterministic=True, seed=0) for n in names)
        best = (statistics.fmean(min(play_model(model, n, deterministic=False, seed=s) for s in range(samples))
                                 for n in names) if samples else float("nan"))
        print(f"| {label} | {greedy:.1f} % | {best:.1f} % | {time.process_time() - start:.0f} |")


def rules_table() -> None:
    print("| instances | rule | all legal jobs | non-delay set |")
    print("|---|---|---:|---:|")
    for label, numbers in SETS.items():
        names = [f"ta{i:02d}" for i in numbers]
        for rule in RULES.values():
            everywhere = statistics.fmean(play_rule(rule, n, non_delay=False) for n in names)
            non_delay = statistics.fmean(play_rule(rule, n, non_delay=True) for n in names)
            print(f"| {label} | {rule.name} | {everywhere:.1f} % | {non_delay:.1f} % |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="a CandidatePolicy model.zip (default: the shipped one)")
    parser.add_argument("--samples", type=int, default=32, help="sampled episodes per instance (0: greedy only)")
    parser.add_argument("--rules", action="store_true", help="also the rules, on all legal jobs and non-delay")
    args = parser.parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO

    from crab_gym.baselines.trained import trained_model

    torch.set_num_threads(1)
    model = MaskablePPO.load(args.model, device="cpu") if args.model else trained_model("Realm-P11-v0")
    model_table(model, args.samples)
    print("\nPublished, ta01-ta10: " + ", ".join(f"{k} {v} %" for k, v in ANCHORS_15x15.items()))
    if args.rules:
        print()
        rules_table()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
