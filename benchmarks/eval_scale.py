"""Evaluation at scale: the same CPU-bound suite run serially, with 2 worker processes and on
Ray with 2 workers, timed in one run, with the speed-ups and a check that the three reports
are equal (wall-clock columns aside).

    python benchmarks/eval_scale.py [--episodes 24] [--instance ta71] [--workers 2] [--no-ray]

The suite is fixed: Realm-P11-v0 on a Taillard instance (ta71: 100 jobs x 20 machines, 2000
steps per episode), policies random, mwkr and spt, ``--episodes`` seeds each: pure Python
work in the env, no solver (whose own threads would blur the comparison) and no cache
shared between episodes. The process and Ray times include starting their workers (each
imports crab_gym); Ray's cluster start (``ray.init``) is timed apart and printed too. On a
cluster (see the README) the Ray part runs unchanged with ``--address auto``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import crab_gym  # noqa: F401  (registers the envs)
from crab_gym.baselines.registry import named_policies
from crab_gym.evaluation.benchmark import Benchmark, BenchmarkReport

POLICIES = ["random", "mwkr", "spt"]


def timed(run: Callable[[], BenchmarkReport]) -> tuple[float, BenchmarkReport]:
    start = time.perf_counter()
    report = run()
    return time.perf_counter() - start, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=24, help="seeds per policy (default: 24)")
    parser.add_argument("--instance", default="ta71", help="Taillard instance (default: ta71)")
    parser.add_argument("--workers", type=int, default=2, help="workers of the parallel runs (default: 2)")
    parser.add_argument("--address", default=None, help="a Ray cluster to join (default: a local one)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray run")
    args = parser.parse_args()

    envs = [("Realm-P11-v0", {"instance": args.instance})]
    seeds = range(args.episodes)
    policies = named_policies(POLICIES)
    n = len(POLICIES) * args.episodes
    print(f"suite: Realm-P11-v0 {args.instance}, policies {', '.join(POLICIES)}, {args.episodes} seeds each "
          f"= {n} episodes; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")

    rows: list[tuple[str, float, BenchmarkReport]] = []
    serial_s, serial = timed(lambda: Benchmark(envs, seeds).run(policies, progress=False))
    rows.append(("serial", serial_s, serial))
    w = args.workers
    proc_s, proc = timed(lambda: Benchmark(envs, seeds, workers=w).run(policies, progress=False))
    rows.append((f"--workers {w} (processes)", proc_s, proc))
    if not args.no_ray:
        import ray

        init_s, _ = timed(lambda: ray.init(address=args.address, include_dashboard=False,
                                           log_to_driver=False, num_cpus=None if args.address else w))
        ray_s, on_ray = timed(lambda: Benchmark(envs, seeds, workers=w, backend="ray").run(policies, progress=False))
        rows.append((f"--backend ray --workers {w}", ray_s, on_ray))
        ray.shutdown()

    print("\n| run | seconds | speed-up vs serial | episodes/s |\n|---|---:|---:|---:|")
    for name, seconds, _ in rows:
        print(f"| {name} | {seconds:.1f} | {serial_s / seconds:.2f}x | {n / seconds:.2f} |")
    if not args.no_ray:
        print(f"\nray.init (local cluster start, not in the Ray row): {init_s:.1f} s")
    same = all(report.comparable() == serial.comparable() for _, _, report in rows)
    errors = sum(report.n_errors for _, _, report in rows)
    print(f"reports equal to the serial one (wall clock aside): {'yes' if same else 'NO'}; errors: {errors}")


if __name__ == "__main__":
    main()
