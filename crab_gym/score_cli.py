"""The ``crab-gym score`` subcommand: one plan file's verdict and the REALM metrics it earns.

Wired into ``crab_gym.cli`` with :func:`add_score_parser`, as ``mcp`` and ``serve`` are. The
logic is :func:`crab_gym.envs.realm.common.plan_score.score_plan`; this module reads the
command line and prints. Exit codes: 0 the plan is feasible, 1 it is not, 2 a usage mistake
(an unknown env or instance, a plan file that is no plan of the env: one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from crab_gym.core.keywords import did_you_mean
from crab_gym.envs.realm.common.plan_score import (
    NotScorableError,
    PlanFormatError,
    PlanScore,
    load_plan,
    score_plan,
)
from crab_gym.envs.realm.index import problem_specs

#: Exceptions of making an env from a user's id and instance: a usage mistake, on one line.
MAKE_ERRORS = (TypeError, ValueError, KeyError, LookupError, OSError, ImportError, gym.error.Error)
#: The reference's fields its first lines show (the others follow, one a line).
REFERENCE_SHOWN = frozenset({"value", "status", "source", "solver", "bound", "workers", "time_limit_s", "measure",
                             "fingerprint"})
#: Width of the metric names column, and of the constraint lists.
NAME_WIDTH, LINE_WIDTH = 24, 96


class ScoreUsageError(Exception):
    """A mistake in the command line or the plan file: one line on stderr, exit code 2."""


def add_score_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``score`` to an ``argparse`` sub-parsers object; returns the new parser."""
    parser = subparsers.add_parser(
        "score",
        help="score a plan file: the checker's verdict per constraint and the REALM metrics",
        description=(
            "Score a plan (a JSON file of the env's submit_plan arguments, as env.unwrapped.plan_json() "
            "writes it after an episode) on one instance: feasible or not, each declared constraint, the "
            "plan's cost, the reference it is measured against and where that comes from, and the REALM "
            "metrics the env gives an episode that submits the plan (optimality by the env's own formula; "
            "0 when infeasible)."
        ),
        epilog="exit codes: 0 the plan is feasible; 1 it is infeasible; 2 usage mistake (one line on stderr).",
    )
    parser.add_argument("--env", required=True, metavar="ID", help="the REALM env id, e.g. Realm-P11-v0")
    parser.add_argument("--instance", required=True, metavar="NAME|PATH",
                        help="a shipped instance name (ft06, p3_small_01, ...) or a path to an instance file, "
                             "as gym.make(ID, instance=...) takes it")
    parser.add_argument("plan", metavar="PLAN.json", help="the plan file (submit_plan arguments as JSON)")
    parser.add_argument("--json", action="store_true", help="print the score as JSON instead of text")
    parser.set_defaults(func=run_score)
    return parser


def run_score(args: argparse.Namespace) -> int:
    """Score the plan file and print it; returns the exit code."""
    try:
        score = _score(args)
    except ScoreUsageError as exc:
        print(f"crab-gym score: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a reference solve of the user's own instance, stopped
        print("crab-gym score: interrupted", file=sys.stderr)
        return 130
    print(json.dumps({"plan_file": args.plan, **score.to_dict()}, indent=2) if args.json else format_score(score, args.plan))
    return 0 if score.feasible else 1


def _score(args: argparse.Namespace) -> PlanScore:
    """Read the plan, make the env, score; every user mistake as :class:`ScoreUsageError`."""
    try:
        plan = load_plan(args.plan)
    except PlanFormatError as exc:
        raise ScoreUsageError(str(exc)) from None
    env = _make_env(args.env, args.instance)
    try:
        return score_plan(env, plan, source=args.plan)
    except (PlanFormatError, NotScorableError) as exc:
        raise ScoreUsageError(str(exc)) from None
    finally:
        env.close()


def _make_env(env_id: str, instance: str) -> gym.Env:
    """``gym.make(env_id, instance=instance)``, its errors as one line naming what was asked."""
    if ":" not in env_id:  # "module:Id" names a family of one's own: gym.make imports it
        realm = [spec.env_id for spec in problem_specs()]
        if env_id not in realm:
            raise ScoreUsageError(f"{env_id!r} is not a REALM env id{did_you_mean(env_id, realm)}; "
                                  f"score takes one of {', '.join(realm)}")
    try:
        return gym.make(env_id, instance=instance)
    except MAKE_ERRORS as exc:
        raise ScoreUsageError(f"cannot make {env_id} with instance {instance!r}: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    """The env's own message: gym.make's re-raised TypeError unwrapped, a KeyError unquoted."""
    if isinstance(exc, TypeError) and exc.__cause__ is not None and "raised from the environment creator" in str(exc):
        exc = exc.__cause__
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc) or type(exc).__name__


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# ====================================================================== the text report
def format_score(score: PlanScore, plan_file: str) -> str:
    """The score as a person reads it: verdict, constraints, checker, reference, metrics."""
    lines = [_headline(score, plan_file), f"cost: {_number(score.cost)}"]
    if score.refused:
        lines.append(score.refused)
    lines += _constraint_lines(score)
    lines += _mapping_lines("checker details", score.details)
    lines += _reference_lines(score.reference)
    title = ("REALM metrics (no episode: a plan the env refuses counts as no plan)" if score.refused
             else "REALM metrics (the env's, for an episode that submits this plan)")
    lines += _mapping_lines(title, score.metrics)
    lines += [f"note: {note}" for note in score.notes]
    return "\n".join(lines)


def _headline(score: PlanScore, plan_file: str) -> str:
    verdict = "feasible" if score.feasible else "INFEASIBLE"
    return f"{score.env_id} {score.instance}: {plan_file} is {verdict}; optimality {score.optimality:.4f}"


def _constraint_lines(score: PlanScore) -> list[str]:
    """Each violated constraint on a line of its own, then the ones that hold."""
    violated, held = score.violations, [name for name, ok in score.constraints.items() if ok]
    lines = [f"constraints: {len(score.constraints)} declared, {len(violated)} violated"]
    soft = " (soft: priced in the cost, the plan stays feasible)" if violated and score.feasible else ""
    lines += [f"  violated  {name}{soft}" for name in violated]
    if held:
        lines += textwrap.wrap(", ".join(held), LINE_WIDTH, initial_indent="  holds     ",
                               subsequent_indent=" " * 12, break_on_hyphens=False)
    return lines


def _reference_lines(reference: Mapping[str, Any]) -> list[str]:
    """The reference's value and how it was found, then the other facts its record keeps."""
    how = [str(reference.get("status"))]
    how += [f"{key} {reference[key]}" for key in ("source", "solver", "bound", "workers")
            if reference.get(key) not in (None, "")]
    if reference.get("time_limit_s") is not None:
        how.append(f"time limit {_number(reference['time_limit_s'])} s")
    lines = [f"reference: {_number(reference.get('value'))} ({'; '.join(how)})",
             f"  optimality is measured against {_number(reference.get('measure'))}"]
    extra = {k: v for k, v in reference.items() if k not in REFERENCE_SHOWN}
    return lines + _mapping_lines("", extra)[1:]


def _mapping_lines(title: str, values: Mapping[str, Any]) -> list[str]:
    """``name  value`` lines; a list of words one per line, a larger structure summed up."""
    lines = [f"{title}:"]
    for name, value in values.items():
        if isinstance(value, (list, dict)) and not value:
            continue
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            lines += [f"  {name}:"] + [f"    {v}" for v in value]
        elif isinstance(value, (list, dict)):
            lines.append(f"  {name:{NAME_WIDTH}s} ({len(value)} entries: --json shows them)")
        else:
            lines.append(f"  {name:{NAME_WIDTH}s} {_number(value)}")
    return lines


def _number(value: Any) -> str:
    """A metric or cost as text: n/a for None (not applicable), ``inf`` kept, floats to 6 digits."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
