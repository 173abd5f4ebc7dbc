"""The scoring contract attacked, measured: per id with disruptions (or a declared reference
attack), the adversarial probes of ``crab_gym.checks.scoring_probes`` on the shipped small and
medium instances, as one Markdown table per probe, plus the verdict.

Usage: python benchmarks/scoring_probes.py [ids...] [--sizes small medium] [--seeds 2]
                                           [--continuations 10] [--attack-seconds 10]
Default ids: every REALM id whose problem has disruptions or declares a reference attack.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.checks.scoring_probes import check_adversarial
from crab_gym.envs.realm.index import problem_specs


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) and value < 10 else f"{value:g}" if isinstance(value, float) else str(value)


def tables(rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    """One Markdown table per probe that played."""
    out = []
    for probe, items in rows.items():
        if not items:
            continue
        keys = list(items[0])
        out += [f"\n{probe}\n", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        out += ["| " + " | ".join(_cell(r[k]) if not isinstance(r[k], list) else ", ".join(r[k]) or "-"
                                  for k in keys) + " |" for r in items]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*")
    parser.add_argument("--sizes", nargs="*", default=["small", "medium"])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--continuations", type=int, default=10)
    parser.add_argument("--attack-seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    ids = args.ids or [s.env_id for s in problem_specs() if s.disruptions or s.reference_attack]
    broken = 0
    for env_id in ids:
        began = time.process_time()
        report = check_adversarial(env_id, sizes=args.sizes, seeds=args.seeds,
                                   random_continuations=args.continuations, attack_seconds=args.attack_seconds,
                                   progress=lambda name: print(f"  {name}", file=sys.stderr, flush=True))
        print(f"\n## {env_id}: {report.verdict()} ({time.process_time() - began:.0f} CPU-s)")
        print("\n".join(tables(report.probe_rows)))
        for failure in report.failures:
            print(f"- {failure}")
        broken += not report.ok
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
