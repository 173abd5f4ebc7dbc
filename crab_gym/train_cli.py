"""The ``crab-gym train`` subcommand: train a dispatcher and write a model ``crab-gym run`` plays.

Wired into ``crab_gym.cli`` with :func:`add_train_parser`; the recipe is
:func:`crab_gym.baselines.rl_train.train_candidates`. Exit codes: 0 trained, 2 a usage mistake
(one line on stderr), 130 interrupted (the best weights on dev so far stay in ``--out/best_dev.zip``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from crab_gym.baselines.candidate_views import view_for
from crab_gym.baselines.rl_train import TrainSpec, plot_curve, train_candidates
from crab_gym.baselines.trained import TRAINED_DIR, install
from crab_gym.datasets.splits import select


class TrainUsageError(Exception):
    """A mistake on the command line: one line on stderr, exit code 2."""


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``train`` to an ``argparse`` sub-parsers object; returns the new parser."""
    defaults = TrainSpec()
    parser = subparsers.add_parser(
        "train",
        help="train a size-agnostic MaskablePPO dispatcher and write DIR/model.zip",
        description=(
            "Train sb3-contrib's MaskablePPO with crab_gym's CandidatePolicy (one score per job, shared "
            "weights) on freshly generated instances, one torch thread, evaluating greedily on the id's dev "
            "split as it goes. Writes DIR/model.zip (the last weights), DIR/best_dev.zip and DIR/training.json "
            "(the command, CPU time, env share, curve). Play it with: crab-gym run --env ID --split test "
            "--policy sb3:DIR/model.zip"
        ),
    )
    parser.add_argument("--env", default=defaults.env_id, metavar="ID",
                        help=f"the env id (default {defaults.env_id}; the ids with a candidate view)")
    parser.add_argument("--steps", type=_count, default=defaults.steps, metavar="N",
                        help=f"env steps to train for (default {defaults.steps:,})")
    parser.add_argument("--out", required=True, metavar="DIR", help="where model.zip and training.json go")
    parser.add_argument("--seed", type=_count0, default=defaults.seed, help="seeds the envs and the policy")
    parser.add_argument("--size", type=_size, default=defaults.size, metavar="JOBSxMACHINES",
                        help="the generated instances' size (default 15x15)")
    parser.add_argument("--n-envs", type=_count, default=None,
                        help="envs stepped together (default: 256 on P11's vector env, 8 pools of dev instances "
                             "elsewhere)")
    parser.add_argument("--eval-every", type=_count0, default=defaults.eval_every, metavar="N",
                        help="steps between dev evaluations (0: only at the end)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--install", action="store_true",
                        help="ship the model: copy it into crab_gym/baselines/trained/ with its manifest entry "
                             "(the policy named `trained`)")
    parser.set_defaults(func=cmd_train)
    return parser


def cmd_train(args: argparse.Namespace) -> int:
    try:
        view_for(args.env)
    except KeyError as exc:
        print(f"crab-gym train: error: {exc.args[0]}", file=sys.stderr)
        return 2
    spec = TrainSpec(env_id=args.env, steps=args.steps, out=args.out, seed=args.seed, size=args.size,
                     n_envs=args.n_envs, eval_every=args.eval_every)
    try:
        record = train_candidates(spec, select([spec.env_id], split=spec.eval_split), progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"crab-gym train: interrupted; the best model so far is in {args.out}/model.zip", file=sys.stderr)
        return 130
    chosen = record["model"]
    print(f"trained {record['steps']:,} steps in {record['cpu_s']:.0f} CPU-s ({record['wall_s']:.0f} s wall, "
          f"{record['steps_per_cpu_s']:,} steps per CPU-s, env {100 * record['env_share']:.0f} %); the model: "
          f"{chosen['weights']} weights, at {chosen.get('steps', 0):,} steps, dev optimality "
          f"{chosen.get('dev_optimality', float('nan')):.3f}")
    try:
        plot_curve(record, f"{args.out}/curve.png")
    except ImportError:  # the viz extra is missing: training.json holds the curve
        pass
    if args.install:
        entry = install(args.out)
        print(f"installed as {TRAINED_DIR / entry['file']} (policy `trained` for {', '.join(entry['env_ids'])})")
    print(f"model: {args.out}/model.zip  ->  crab-gym run --env {args.env} --split test "
          f"--policy sb3:{args.out}/model.zip")
    return 0


def _count(text: str) -> int:
    value = _count0(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _count0(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _size(text: str) -> tuple[int, int]:
    try:
        jobs, machines = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected JOBSxMACHINES such as 15x15, got {text!r}") from None
    if jobs < 2 or machines < 1:
        raise argparse.ArgumentTypeError(f"expected at least 2 jobs and 1 machine, got {text!r}")
    return jobs, machines
