"""Does adaptation discriminate? Per REALM id with disruptions: the mean adaptation of random
play, the greedy heuristic and the oracle's plan over the shipped set (the episodes where it
applies), and how many random episodes score at least 0.99 (a metric random play maxes out
does not rank anything).

The plans are played by :mod:`crab_gym.checks.scoring` (``play``, ``submit``), the same
ones the scoring tests play; the deferred re-solve runs through ``finish_metrics``.

Usage: python benchmarks/adaptation.py [ids...] [--random 2] [--workers 2] [--sizes small medium]
(prints a Markdown table; default ids: every REALM id whose problem has disruptions)
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import gymnasium as gym

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.checks.scoring import greedy_factory, play, shipped_instances, submit
from crab_gym.envs.realm.index import problem_specs

IDS = tuple(spec.env_id for spec in problem_specs() if spec.disruptions)
ROLES = ("random", "greedy", "oracle")


def instance_adaptation(job: tuple[str, str, int]) -> dict[str, list[float | None]]:
    """Adaptation of every role on one instance (None where it does not apply)."""
    env_id, name, randoms = job
    env = gym.make(env_id, instance=name)
    try:
        out: dict[str, list[float | None]] = {role: [] for role in ROLES}
        for k in range(randoms):
            out["random"].append(play(env, RandomPolicy(env, seed=k), "random", k).metrics.get("adaptation"))
        greedy = greedy_factory(env_id)
        if greedy is not None:
            out["greedy"].append(play(env, greedy(env), "greedy", 0).metrics.get("adaptation"))
        env.reset(seed=0)
        plan = env.unwrapped.reference.plan
        oracle = submit(env, plan, "oracle", 0) if plan else None
        if oracle is not None:
            out["oracle"].append(oracle.metrics.get("adaptation"))
        return out
    finally:
        env.close()


def summary(env_id: str, rows: list[dict[str, list[float | None]]]) -> list[str]:
    """One Markdown row: each role's mean over the episodes where adaptation applies."""
    cells = [env_id]
    for role in ROLES:
        values = [v for row in rows for v in row[role] if v is not None]
        total = sum(len(row[role]) for row in rows)
        cells.append(f"{statistics.fmean(values):.3f} ({len(values)}/{total})" if values else "n/a")
    randoms = [v for row in rows for v in row["random"] if v is not None]
    cells.append(f"{sum(v >= 0.99 for v in randoms)}/{len(randoms)}")
    return cells


def main(argv: list[str] | None = None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", default=list(IDS))
    parser.add_argument("--random", type=int, default=2, help="random episodes per instance")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sizes", nargs="*", default=None, help="only instances of these size classes")
    args = parser.parse_args(argv)
    print("| id | random | greedy | oracle | random >= 0.99 |")
    print("|---|---|---|---|---|")
    with ProcessPoolExecutor(args.workers) as pool:
        for env_id in args.ids:
            env_id = env_id if env_id.startswith("Realm-") else f"Realm-{env_id}-v0"
            start = time.perf_counter()
            names = [n for n in shipped_instances(env_id) if not args.sizes or any(z in n for z in args.sizes)]
            jobs: list[Any] = [(env_id, name, args.random) for name in names]
            rows = list(pool.map(instance_adaptation, jobs))
            print("| " + " | ".join(summary(env_id, rows)) + f" |  <!-- {time.perf_counter() - start:.0f} s -->",
                  flush=True)


if __name__ == "__main__":
    main()
