"""What the P8 adaptation cache saves: the CPU seconds ``finish_metrics()`` takes per episode
(the adaptation yardstick) in a fresh process with an empty cache (what every run paid before
the yardstick was kept on disk) and in a second fresh process reading the first one's cache.

Each process plays the greedy heuristic (``greedy_action``) once on every shipped P8
instance. Usage: python benchmarks/wedding_adaptation_cache.py [--instances N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def child(count: int) -> None:
    """Play the episodes; print the CPU seconds of each ``finish_metrics()`` as JSON."""
    from crab_gym.envs.realm.wedding.env_disruptions import WeddingDisruptionEnv
    from crab_gym.envs.realm.wedding.formats import shipped_p8_names
    from crab_gym.envs.realm.wedding.heuristics import greedy_action

    seconds, values = [], []
    for name in shipped_p8_names()[:count]:
        env = WeddingDisruptionEnv(name)
        env.reset(seed=0)
        done = False
        while not done:
            _, _, done, _, _ = env.step(greedy_action(env))
        start = time.process_time()
        metrics = env.finish_metrics()
        seconds.append(time.process_time() - start)
        values.append(metrics["adaptation"])
    print(json.dumps({"seconds": seconds, "adaptation": values}))


def run(cache: str, count: int) -> dict:
    """One fresh process with ``cache`` as its cache folder."""
    env = {**os.environ, "CRAB_GYM_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, __file__, "--child", str(count)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    """Cold and warm, in one run, on one cache folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=100)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as cache:
        cold, warm = run(cache, args.instances), run(cache, args.instances)
    assert cold["adaptation"] == warm["adaptation"], "the cache changed a score"
    for label, r in (("cold (empty cache: every run before)", cold), ("warm (read from disk)", warm)):
        s = r["seconds"]
        print(f"{label}: {len(s)} episodes, finish_metrics CPU-s per episode mean {statistics.fmean(s):.3f}, "
              f"min {min(s):.3f}, max {max(s):.3f}")


if __name__ == "__main__":
    main()
