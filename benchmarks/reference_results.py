"""How long the reference results table takes to regenerate from cold caches (issue 34: at most
15 minutes with ``--workers 2`` on a 2-core machine).

    python benchmarks/reference_results.py                 # the whole table, --workers 2
    python benchmarks/reference_results.py --env Realm-P2-v0 Realm-P11-v0 --workers 1

Runs ``crab-gym results`` in a fresh process with an empty cache directory and an empty
``--out``, and prints its wall and CPU time beside the reference measured in the same run: the
sum of the episodes' own wall times (what one worker with no start-up costs would take), so the
ratio says how much of the two cores the run used. Then the share of each id, the slowest first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def regenerate(env_ids: list[str] | None, workers: int, out: Path, cache: Path) -> tuple[float, float, int]:
    """Run ``crab-gym results``; (wall s, CPU s of the run's processes, exit code)."""
    command = [sys.executable, "-m", "crab_gym.cli", "results", "--workers", str(workers), "--out", str(out),
               "--quiet"]
    if env_ids:
        command += ["--env", *env_ids]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    code = subprocess.run(command, env={**os.environ, "CRAB_GYM_CACHE_DIR": str(cache)}, check=False).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def episode_seconds(out: Path) -> dict[str, float]:
    """Per env id, the sum of its episodes' wall times."""
    per_env: dict[str, float] = defaultdict(float)
    for line in (out / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        per_env[record["env_id"]] += float(record["wall_time_s"])
    return dict(per_env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", nargs="+", default=None, metavar="ID")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out, cache = Path(tmp) / "reference", Path(tmp) / "cache"
        wall, cpu, code = regenerate(args.env, args.workers, out, cache)
        per_env = episode_seconds(out)
        episodes = len((out / "episodes.jsonl").read_text().splitlines())
    serial = sum(per_env.values())
    print(f"crab-gym results --workers {args.workers} ({episodes} episodes, exit code {code}), cold caches:")
    print(f"  wall {wall:7.1f} s ({wall / 60:.1f} min)   CPU {cpu:7.1f} s")
    print(f"  reference, same run: the episodes' own wall times sum to {serial:.1f} s "
          f"(wall x workers / that = {wall * args.workers / serial:.2f})")
    for env_id, seconds in sorted(per_env.items(), key=lambda item: -item[1]):
        print(f"  {env_id:14s} {seconds:7.1f} s of episodes ({100 * seconds / serial:4.1f} %)")


if __name__ == "__main__":
    main()
