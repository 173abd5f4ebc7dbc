"""CrabDesktop: what a random agent scores on every task template, beside the scripted
solution in the same run (the scoring promise: doing random things scores near 0, the
template's solution scores 1).

The random agent samples uniformly from the env's action space (clicks, keys, text, waits,
``complete``, ``declare_infeasible``: invalid choices, such as keys the display lacks, are
refused and change nothing) for up to ``--steps`` steps, on a fresh instance (seed) per
episode. Its score is the episode's return (= completeness of the evaluator graph).

Usage: python benchmarks/desktop_random.py [--episodes 1] [--steps 30] [--keep-going] [template ...]
"""

from __future__ import annotations

import argparse
import statistics

from crab_gym.envs.desktop.env import CrabDesktopEnv
from crab_gym.envs.desktop.templates import TEMPLATES

ENDINGS = ("complete", "declare_infeasible")


def random_calls(env: CrabDesktopEnv, steps: int, keep_going: bool) -> list:
    """``steps`` uniform samples of the action space; with ``keep_going``, samples that would
    end the episode (``complete``, ``declare_infeasible``) are drawn again."""
    calls = []
    while len(calls) < steps:
        element = env.action_space.sample()
        if keep_going and env.codec.decode(element)["name"] in ENDINGS:
            continue
        calls.append(element)
    return calls


def episode(env: CrabDesktopEnv, template_id: str, seed: int, steps: int, scripted: bool,
            keep_going: bool = False) -> float:
    env.reset(seed=seed, options={"task": template_id, "task_seed": seed})
    env.action_space.seed(seed)
    calls = list(env.task.solution) if scripted else random_calls(env, steps, keep_going)
    total = 0.0
    for call in calls:
        _, reward, terminated, truncated, _ = env.step(call)
        total += reward
        if terminated or truncated:
            break
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1, help="random episodes per template (default 1)")
    parser.add_argument("--steps", type=int, default=30, help="steps per random episode (default 30)")
    parser.add_argument("--keep-going", action="store_true",
                        help="a random agent that never ends the episode itself (all --steps are played)")
    parser.add_argument("templates", nargs="*", help="template ids (default: all)")
    args = parser.parse_args()
    chosen = [TEMPLATES[t] for t in args.templates] if args.templates else list(TEMPLATES.values())
    rows = []
    for machines in (1, 2):
        templates = [t for t in chosen if (len(t.envs) > 1) == (machines == 2)]
        if not templates:
            continue
        env = CrabDesktopEnv(templates[0].id, seed=0, obs_size=(32, 20))
        try:
            for tpl in templates:
                random = [episode(env, tpl.id, 1000 + i, args.steps, False, args.keep_going)
                          for i in range(args.episodes)]
                scripted = episode(env, tpl.id, 1000, args.steps, True)
                rows.append((tpl.id, statistics.mean(random), max(random), scripted))
                print(f"| {tpl.id} | {rows[-1][1]:.2f} | {rows[-1][2]:.2f} | {scripted:.2f} |", flush=True)
        finally:
            env.close()
    print(f"\nrandom agent: mean {statistics.mean(r[1] for r in rows):.3f} over {len(rows)} templates x "
          f"{args.episodes} episode(s) of <= {args.steps} steps; templates where it scored above 0: "
          f"{[r[0] for r in rows if r[2] > 0] or 'none'}; scripted solution mean "
          f"{statistics.mean(r[3] for r in rows):.3f}")


if __name__ == "__main__":
    main()
