"""Scores you can trust, measured: per REALM problem, mean optimality of doing nothing, random
play, the greedy heuristic and the oracle over the shipped set, and how good the yardstick is
(how many references are proven optimal, and the gap to the proven bound of the others).

Every figure comes from ``crab_gym.checks.check_scoring`` (the same plans the tests
use), run in this process, so the table and the promises it checks are one measurement.

Usage: python benchmarks/scoring.py [ids...] [--tries 20]   (prints a Markdown table)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass

import gymnasium as gym

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.checks.scoring import DISCRIMINATION_ORDER, ScoringReport, check_scoring, shipped_instances
from crab_gym.envs.registration import realm_ids

#: Relative tolerance under which a reference counts as proven optimal by its bound.
PROVEN = 1e-9


@dataclass
class Yardstick:
    """The references of one id: how many are proven optimal, and the others' gaps."""

    instances: int
    proven: int
    gaps: list[float]  # (measure - bound) / measure for references with a bound below them
    unbounded: int  # references with no bound at all

    def cells(self) -> list[str]:
        gap = f"{statistics.fmean(self.gaps):.1%} / {max(self.gaps):.1%}" if self.gaps else "-"
        return [f"{self.proven}/{self.instances}", gap, str(self.unbounded)]


def yardstick(env_id: str) -> Yardstick:
    """Read every shipped reference of ``env_id`` (no solver runs)."""
    proven, gaps, unbounded = 0, [], 0
    names = shipped_instances(env_id)
    for name in names:
        env = gym.make(env_id, instance=name)
        ref = env.unwrapped.reference
        env.close()
        measure, bound = ref.measure, ref.bound
        if ref.status == "OPTIMAL" or (bound is not None and measure is not None and bound >= measure * (1 - PROVEN)):
            proven += 1
        elif bound is not None and measure:
            gaps.append((measure - bound) / measure)
        else:
            unbounded += 1
    return Yardstick(len(names), proven, gaps, unbounded)


def row(env_id: str, report: ScoringReport, stick: Yardstick, seconds: float) -> list[str]:
    return [env_id, *report.mean_cells(), *stick.cells(), report.verdict(), f"{seconds:.0f}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ids", nargs="*", help="REALM ids (default: all)")
    parser.add_argument("--tries", type=int, default=20, help="local-search steps per instance (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    header = ["env", *DISCRIMINATION_ORDER, "proven optimal", "gap mean / max", "no bound", "promises", "seconds"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    failures: list[str] = []
    for env_id in args.ids or realm_ids():
        start = time.perf_counter()
        report = check_scoring(env_id, search_tries=args.tries, seed=args.seed)
        seconds = time.perf_counter() - start
        print("| " + " | ".join(row(env_id, report, yardstick(env_id), seconds)) + " |", flush=True)
        failures += [f"{env_id}: {n} x {kind}" for kind, n in report.kinds().items()]
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
