"""Record, or compare, every shipped REALM instance's oracle, greedy and random metrics.

A refactor that must change no number (moving code between families and the shared kits)
is checked with it: record before, record after, compare::

    python scripts/metrics_snapshot.py record /tmp/before.json
    ... the change ...
    python scripts/metrics_snapshot.py record /tmp/after.json
    python scripts/metrics_snapshot.py compare /tmp/before.json /tmp/after.json

``record`` plays one episode per (id, shipped instance, policy): the oracle, the id's greedy
heuristic and the seeded random policy (seed 0), and keeps the complete episode metrics
(deferred adaptation finished, as the runner reports it), the return (with the env's
``deferred_reward()``, as the runner's) and the step count.
``compare`` prints every value that differs and exits 1 if any does. ``--ids`` limits both.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.baselines.registry import policy_specs
from crab_gym.datasets import list_instances
from crab_gym.envs.realm.index import problem_spec
from crab_gym.envs.registration import realm_ids
from crab_gym.evaluation.episode_runner import deferred_return, finished_metrics


def _policies(env_id: str) -> dict[str, Any]:
    """The three roles of an id: oracle, its greedy heuristic, seeded random."""
    specs = policy_specs()
    greedy = next(s for s in specs.values() if s.greedy and s.fits(env_id))
    return {"oracle": specs["oracle"], "greedy": greedy, "random": specs["random"]}


def _episode(env_id: str, instance: str, spec: Any) -> dict[str, Any]:
    """One episode's complete metrics, return and length."""
    env = gym.make(env_id, instance=instance)
    try:
        policy = spec.build(env)
        obs, info = env.reset(seed=0)
        total, steps, done = 0.0, 0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(policy(obs, info))
            total, steps, done = total + float(reward), steps + 1, terminated or truncated
        metrics = finished_metrics(env, info)
        total += deferred_return(env) if terminated else 0.0  # as the runner's return (0 when nothing waited)
        return {"return": total, "steps": steps, **metrics}
    finally:
        env.close()


def record(ids: list[str], out: Path) -> None:
    """Play every (id, instance, role) and write the figures to ``out`` as JSON."""
    table: dict[str, Any] = {}
    for env_id in ids:
        problem = env_id.split("-")[1]
        for role, spec in _policies(env_id).items():
            for instance in list_instances(problem):
                table[f"{env_id}|{instance}|{role}"] = _episode(env_id, instance, spec)
        print(f"{env_id}: {len(list_instances(problem))} instances x 3 roles", file=sys.stderr, flush=True)
    out.write_text(json.dumps(table, indent=1, sort_keys=True, default=str))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    return a == b


def compare(before: Path, after: Path, ids: list[str]) -> int:
    """Print each differing value (and each missing episode); the number of differences."""
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    keys = sorted(k for k in old.keys() | new.keys() if k.split("|")[0] in ids)
    differences = 0
    for key in keys:
        if key not in old or key not in new:
            print(f"{key}: only in {'after' if key in new else 'before'}")
            differences += 1
            continue
        for name in sorted(old[key].keys() | new[key].keys()):
            a, b = old[key].get(name, "<absent>"), new[key].get(name, "<absent>")
            if not _same(a, b):
                print(f"{key} {name}: {a!r} -> {b!r}")
                differences += 1
    print(f"{len(keys)} episodes compared, {differences} differences")
    return differences


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    rec = sub.add_parser("record", help="play every shipped instance and write the figures")
    rec.add_argument("out", type=Path)
    cmp_ = sub.add_parser("compare", help="print what differs between two records")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    for p in (rec, cmp_):
        p.add_argument("--ids", nargs="*", default=None, help="env ids (default: every REALM id)")
    args = parser.parse_args(argv)
    ids = [problem_spec(i).env_id for i in args.ids] if args.ids else realm_ids()  # "P7" or "Realm-P7-v0"
    if args.verb == "record":
        record(ids, args.out)
        return 0
    return 1 if compare(args.before, args.after, ids) else 0


if __name__ == "__main__":
    sys.exit(main())
