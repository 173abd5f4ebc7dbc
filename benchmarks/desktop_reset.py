"""CrabDesktop reset times, in one run: what an agent waits for before each task.

Per template, the median ``reset()`` over a few seeds (apps started, files written, settings
and clipboard set); for the two-machine templates, the reset of both displays. Beside them,
in the same run, the reference: a bare reset of the same display (apps closed, work
directory emptied, no task set up). Targets (issue 27): a task's reset <= 0.5 s median, a
two-display episode's <= 1 s. Figures depend on the machine and its load: compare rows of
one run.

Usage: python benchmarks/desktop_reset.py [--seeds 5] [template ...]
"""

from __future__ import annotations

import argparse
import statistics
import time

from crab_gym.envs.desktop.env import CrabDesktopEnv
from crab_gym.envs.desktop.templates import TEMPLATES


def timed_resets(env: CrabDesktopEnv, template_id: str, seeds: int) -> list[float]:
    times = []
    for seed in range(seeds):
        tic = time.perf_counter()
        env.reset(options={"task": template_id, "task_seed": seed})
        times.append(time.perf_counter() - tic)
    return times


def bare_resets(env: CrabDesktopEnv, n: int) -> list[float]:
    """The reference: reset_desktop alone on every machine of ``env``."""
    times = []
    for _ in range(n):
        tic = time.perf_counter()
        for environment in env.environments.values():
            environment.take("reset_desktop")
        times.append(time.perf_counter() - tic)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="resets per template (default 5)")
    parser.add_argument("templates", nargs="*", help="template ids (default: all)")
    args = parser.parse_args()
    chosen = [TEMPLATES[t] for t in args.templates] if args.templates else list(TEMPLATES.values())
    groups = {1: [t for t in chosen if len(t.envs) == 1], 2: [t for t in chosen if len(t.envs) > 1]}
    for machines, templates in groups.items():
        if not templates:
            continue
        env = CrabDesktopEnv(templates[0].id, seed=0)
        try:
            env.reset(options={"task_seed": 0})  # starts the display(s): not a reset we time
            reference = statistics.median(bare_resets(env, 10))
            medians = {t.id: statistics.median(timed_resets(env, t.id, args.seeds)) for t in templates}
        finally:
            env.close()
        target = 0.5 if machines == 1 else 1.0
        print(f"\n{machines} machine(s): reference (bare reset of the display(s)) {reference:.3f} s; "
              f"target <= {target} s median")
        print("| template | median reset s | x reference |\n|---|---|---|")
        for tid, med in medians.items():
            print(f"| {tid} | {med:.3f} | {med / reference:.1f} |")
        values = sorted(medians.values())
        print(f"median of medians {statistics.median(values):.3f} s, largest {values[-1]:.3f} s "
              f"({max(medians, key=medians.get)}); over target: "
              f"{[t for t, m in medians.items() if m > target] or 'none'}")


if __name__ == "__main__":
    main()
