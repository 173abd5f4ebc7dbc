"""The ``crab-gym`` command: list envs, run policies on them, serve a desktop."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym

DEFAULT_ENVS = ["Realm-P1-v0", "Realm-P2-v0", "Realm-P3-v0", "Realm-P4-v0", "Realm-P11-v0"]
DEFAULT_POLICIES = ["random", "oracle"]


def _policy_factories() -> dict[str, object]:
    from crab_gym.baselines.registry import policy_factories

    return policy_factories()


def cmd_list(args: argparse.Namespace) -> int:
    import crab_gym  # noqa: F401  (registers the ids)
    from crab_gym.envs.registration import ENV_SPECS

    for spec in ENV_SPECS:
        print(f"{spec.id:24s} {spec.entry_point}")
    print("\npolicies: " + ", ".join(sorted(_policy_factories())))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import crab_gym  # noqa: F401
    from crab_gym.core.benchmark import Benchmark

    factories = _policy_factories()
    unknown = [p for p in args.policy if p not in factories]
    if unknown:
        print(f"unknown policy {unknown}; available: {sorted(factories)}", file=sys.stderr)
        return 2
    envs = []
    for env_id in args.env:
        if env_id not in gym.registry:
            print(f"unknown env id {env_id!r}; run `crab-gym list`", file=sys.stderr)
            return 2
        envs.append((env_id, json.loads(args.env_kwargs) if args.env_kwargs else {}))
    bench = Benchmark(envs, seeds=range(args.seed, args.seed + args.episodes), max_steps=args.max_steps)
    try:
        report = bench.run({p: factories[p] for p in args.policy}, progress=not args.quiet)
    except (ValueError, TypeError, ImportError) as exc:  # a policy that cannot run here
        print(f"crab-gym run: {exc}", file=sys.stderr)
        return 2
    print(report.to_markdown())
    if args.out:
        paths = report.write(args.out)
        print(f"wrote {paths['json']} and {paths['markdown']}")
        if args.plot:
            print(f"wrote {report.plot(Path(args.out) / 'report.png')}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crab-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="list the env ids and baseline policies")
    p_list.set_defaults(func=cmd_list)
    p_run = sub.add_parser("run", help="run baseline policies on envs and print a report")
    p_run.add_argument("--env", nargs="+", default=DEFAULT_ENVS, help="env ids (default: every REALM env)")
    p_run.add_argument("--env-kwargs", default="", help='JSON kwargs for gym.make, e.g. \'{"instance": "ft06"}\'')
    p_run.add_argument(
        "--policy", nargs="+", default=DEFAULT_POLICIES, help="policy names (see `list`; default: random oracle)"
    )
    p_run.add_argument("--episodes", type=int, default=3)
    p_run.add_argument("--seed", type=int, default=0)
    p_run.add_argument("--max-steps", type=int, default=10_000)
    p_run.add_argument("--out", default="", help="directory for report.json / report.md")
    p_run.add_argument("--plot", action="store_true", help="also write report.png (needs the viz extra)")
    p_run.add_argument("--quiet", action="store_true", help="no progress bar")
    p_run.set_defaults(func=cmd_run)
    try:
        from crab_gym.envs.desktop.cli import add_serve_parser
    except ImportError:  # the desktop module is optional at import time
        add_serve_parser = None
    if add_serve_parser is not None:
        add_serve_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
