"""What reusing one env per worker saves: a P7 run (random play, every shipped instance,
``--seeds`` episodes each, instances interleaved as a run orders them) with a fresh
``gym.make`` per episode (before) and with the runner's :class:`EnvPool` (now), each in a
fresh process with an empty cache folder (cold: the adaptation re-solves run), then again in
the same process (warm: the re-solves come from the cache). Prints wall seconds, the seconds
spent in ``gym.make`` and how many envs were made; checks the records are equal.

Usage: python benchmarks/runner_env_reuse.py [--seeds 3] [--env Realm-P7-v0]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def child(env_id: str, seeds: int, reuse: bool) -> None:
    """Run the episodes twice (cold, warm); print the timings and records as JSON."""
    import dataclasses

    import gymnasium as gym

    from crab_gym.baselines.registry import named_policies
    from crab_gym.checks.scoring import shipped_instances
    from crab_gym.evaluation.episode import EpisodeSpec
    from crab_gym.evaluation.episode_runner import EnvPool, EpisodeContext, run_episode

    made = {"n": 0, "s": 0.0}
    real_make = gym.make

    def timed_make(*args, **kwargs):
        start = time.perf_counter()
        try:
            return real_make(*args, **kwargs)
        finally:
            made["n"] += 1
            made["s"] += time.perf_counter() - start

    gym.make = timed_make
    specs = [EpisodeSpec(env_id, {"instance": name}, "random", k, k, 10_000)
             for k in range(seeds) for name in shipped_instances(env_id)]
    context = EpisodeContext.for_envs(named_policies(["random"]), [env_id])
    out = {}
    for phase in ("cold", "warm"):
        made.update(n=0, s=0.0)
        pool = EnvPool() if reuse else None
        start = time.perf_counter()
        results = [run_episode(spec, context, pool=pool) for spec in specs]
        wall = time.perf_counter() - start
        if pool is not None:
            pool.close()
        records = [{k: v for k, v in dataclasses.asdict(r).items() if k != "wall_time_s"} for r in results]
        out[phase] = {"wall": wall, "make_s": made["s"], "makes": made["n"], "episodes": len(specs),
                      "records": records}
    print(json.dumps(out, default=str))


def run(env_id: str, seeds: int, reuse: bool) -> dict:
    """One fresh process, with a cache folder of its own."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CRAB_GYM_CACHE_DIR": cache}
        cmd = [sys.executable, __file__, "--child", "reuse" if reuse else "make", "--seeds", str(seeds), "--env", env_id]
        out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    """Before and now, in one run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--env", default="Realm-P7-v0")
    parser.add_argument("--child", choices=["make", "reuse"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.env, args.seeds, args.child == "reuse")
        return
    before, now = run(args.env, args.seeds, False), run(args.env, args.seeds, True)
    for phase in ("cold", "warm"):
        assert before[phase]["records"] == now[phase]["records"], f"{phase}: reusing envs changed a record"
        for label, r in (("gym.make per episode", before[phase]), ("one env per worker", now[phase])):
            r = r if isinstance(r, dict) else {}
            print(f"{args.env} {phase}, {label}: {r['episodes']} episodes, {r['wall']:.1f} s wall, "
                  f"{r['makes']} makes taking {r['make_s']:.2f} s ({r['make_s'] / r['wall']:.1%})")


if __name__ == "__main__":
    main()
