"""Gap of each dispatching rule to the reference makespan on Taillard's ta01-ta10.

    python benchmarks/jobshop_rules_gap.py [--instances ta01 ta02 ...]

Prints a Markdown table: one row per instance, one column per rule, values are
``100 * (makespan - reference) / reference`` (reference = proven optimum for ta01-ta10).
Deterministic: the rules have no randomness and break ties by the lowest job index.
"""

from __future__ import annotations

import argparse

import gymnasium as gym

import crab_gym  # noqa: F401  (registers Realm-P11-v0)
from crab_gym.envs.realm.jobshop.heuristics import RULES, run_rule

ENV_ID = "Realm-P11-v0"


def ensure_registered() -> None:
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="crab_gym.envs.realm.jobshop.env:JobShopEnv")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=[f"ta{i:02d}" for i in range(1, 11)])
    args = parser.parse_args()
    ensure_registered()
    names = list(RULES)
    print("| instance | reference | " + " | ".join(f"{n} gap %" for n in names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    sums = dict.fromkeys(names, 0.0)
    for inst in args.instances:
        env = gym.make(ENV_ID, instance=inst)
        cells = []
        ref = kind = None
        for name in names:
            info = run_rule(env, RULES[name])
            m = info["metrics"]
            ref, kind = m["best_known"], m["best_known_kind"]
            gap = 100.0 * m["gap_to_best_known"]
            sums[name] += gap
            cells.append(f"{gap:.1f} ({m['makespan']})")
        label = f"{ref}" + ("" if kind == "optimum" else f" ({kind})")
        print(f"| {inst} | {label} | " + " | ".join(cells) + " |")
        env.close()
    count = len(args.instances)
    print("| **mean** | | " + " | ".join(f"**{sums[n] / count:.1f}**" for n in names) + " |")
    print("\nCells: gap % to the literature's best known makespan (the optimum where proven). Ties broken by the lowest job index.")


if __name__ == "__main__":
    main()
