"""Instances with a known optimum: how long a constructed instance and its certificate take,
and how far the dispatching rules and a short CP-SAT run land from the certified optimum.

    python benchmarks/jobshop_constructed.py [--seeds 20] [--cp-sat-seconds 10] [--rules-seeds 10]

Three tables, one run:

1. **Generation time** (median over ``--seeds`` seeds) of ``constructed_instance`` with its
   certificate (the proof included: the family's checker and bound run on every instance), beside
   Taillard's ``random_instance`` of the same size in the same run (data only, no reference).
2. **Rule gaps**: mean gap of each dispatching rule to the optimum on constructed instances
   (the certified ``C*``), beside the same rules on classical instances of the same size with
   proven optima (Taillard's ta01-ta10, 15x15; Lawrence's la11-la15, 20x5), in the same run;
   and on J3-shaped ones (no classical counterpart).
3. **CP-SAT** (one worker, ``--cp-sat-seconds``) on one constructed instance per shape: the
   makespan it reaches and its proven bound against the certified ``C*`` (skip with 0).
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym

import crab_gym  # noqa: F401  (registers Realm-P11-v0)
from crab_gym.envs.realm.jobshop.constructed import J3_SHAPE, constructed_instance
from crab_gym.envs.realm.jobshop.generator import random_instance
from crab_gym.envs.realm.jobshop.heuristics import RULES, run_rule
from crab_gym.envs.realm.jobshop.library import load_jssp_instance
from crab_gym.envs.realm.jobshop.oracle import solve_jssp

SHAPES = {
    "P11 6x6": {"jobs": 6, "machines": 6},
    "P11 15x15": {"jobs": 15, "machines": 15},
    "P11 100x20": {"jobs": 100, "machines": 20},
    "J3 200x50": dict(J3_SHAPE),
}


def _build(shape: dict, seed: int):
    opts = dict(shape)
    return constructed_instance(opts.pop("jobs"), opts.pop("machines"), seed=seed, **opts)


def timing(seeds: int) -> None:
    print("| shape | ops | constructed + certificate, median ms | Taillard random_instance, median ms |")
    print("|---|---:|---:|---:|")
    for label, shape in SHAPES.items():
        built, drawn = [], []
        for seed in range(seeds):
            t0 = time.perf_counter()
            inst, _ = _build(shape, seed)
            built.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            random_instance(shape["jobs"], shape["machines"], seed)
            drawn.append(time.perf_counter() - t0)
        ops = inst.n_jobs * inst.n_ops
        print(f"| {label} | {ops} | {1000 * statistics.median(built):.1f} | {1000 * statistics.median(drawn):.1f} |")


def rule_gaps(seeds: int) -> None:
    names = list(RULES)
    print("\n| instances | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    rows = {
        f"constructed 15x15, seeds 0-{seeds - 1}": [_build(SHAPES["P11 15x15"], s)[0] for s in range(seeds)],
        "Taillard ta01-ta10 (15x15)": [load_jssp_instance(f"ta{i:02d}") for i in range(1, 11)],
        f"constructed 20x5, seeds 0-{seeds - 1}": [_build({"jobs": 20, "machines": 5}, s)[0] for s in range(seeds)],
        "Lawrence la11-la15 (20x5)": [load_jssp_instance(f"la{i}") for i in range(11, 16)],
        "constructed J3 200x50, seeds 0-2": [_build(SHAPES["J3 200x50"], s)[0] for s in range(3)],
    }
    for label, instances in rows.items():
        gaps = {n: [] for n in names}
        for inst in instances:
            env = gym.make("Realm-P11-v0", instance=inst)
            for n in names:
                gaps[n].append(run_rule(env, RULES[n], seed=0)["metrics"]["makespan"] / inst.optimum - 1)
            env.close()
        print(f"| {label} | " + " | ".join(f"{100 * statistics.mean(gaps[n]):.1f} %" for n in names) + " |")


def cp_sat(seconds: float) -> None:
    print("\n| shape | C* (certified) | CP-SAT makespan | CP-SAT bound | status | gap |")
    print("|---|---:|---:|---:|---|---:|")
    for label in ("P11 15x15", "P11 100x20", "J3 200x50"):
        inst, cert = _build(SHAPES[label], 0)
        result = solve_jssp(inst, time_limit=seconds, num_workers=1)
        gap = "-" if result.cost is None else f"{100 * (result.cost / cert.makespan - 1):.1f} %"
        print(f"| {label} | {cert.makespan} | {result.cost} | {result.bound} | {result.status} | {gap} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rules-seeds", type=int, default=10)
    parser.add_argument("--cp-sat-seconds", type=float, default=10.0)
    args = parser.parse_args()
    timing(args.seeds)
    rule_gaps(args.rules_seeds)
    if args.cp_sat_seconds > 0:
        print(f"\nCP-SAT: one worker, {args.cp_sat_seconds:g} s, seed-0 instance of each shape.")
        cp_sat(args.cp_sat_seconds)


if __name__ == "__main__":
    main()
