"""``python -m crab_gym.checks``: the contract check over registered ids, or with ``--scoring``
the scoring contract over the REALM ids; one Markdown row per id, failures on stderr."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable

from crab_gym.checks import ContractReport, check_contract, check_scoring, registered_env_ids
from crab_gym.envs.registration import realm_ids


def progress_line(done: int, total: int, env_id: str, elapsed_s: float) -> str:
    """``[3/15] Realm-P3-v0 checked; 2 min 05 s so far, about 8 min left``: a long check (the
    default takes minutes per id on a laptop) says how far it is, on stderr."""
    left = elapsed_s / done * (total - done)
    return (f"[{done}/{total}] {env_id} checked; {_minutes(elapsed_s)} so far"
            + (f", about {_minutes(left)} left" if done < total else ""))


def _minutes(seconds: float) -> str:
    whole = int(round(seconds))
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"


def scoring_main(ids: list[str], seed: int, tries: int, generated: int = 0, adversarial: bool = False) -> int:
    """``--scoring``: :func:`check_scoring` on each REALM id, a row per id, failures on stderr."""
    ids = ids or realm_ids()
    print("| env | instances | do-nothing | random | greedy | oracle | promises |")
    print("|---|---:|---:|---:|---:|---:|---|")
    failed = False
    for env_id in ids:
        report = check_scoring(env_id, seed=seed, search_tries=tries, generated=generated, adversarial=adversarial)
        cells = " | ".join(report.mean_cells())
        print(f"| {env_id} | {len(report.instances)} | {cells} | {report.verdict()} |", flush=True)
        for kind, count in report.kinds().items():
            print(f"{env_id}: {count} x {kind}", file=sys.stderr)
        failed |= not report.ok
    return 1 if failed else 0


def main(argv: Iterable[str] | None = None) -> int:
    """The command: the contract check over registered ids, or with ``--scoring`` the scoring
    contract over the REALM ids. Returns the exit status (1 if any id fails)."""
    parser = argparse.ArgumentParser(prog="python -m crab_gym.checks",
                                     description="The contract every crab_gym env keeps, checked from the shell.")
    parser.add_argument("ids", nargs="*", help="env ids (default: every registered crab_gym id)")
    parser.add_argument("--steps", type=int, default=2000, help="mixed steps per env (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the action draws and resets")
    parser.add_argument("--scoring", action="store_true",
                        help="check the scoring contract (check_scoring) on every shipped instance instead")
    parser.add_argument("--tries", type=int, default=20, help="--scoring: local-search steps per instance (default 20)")
    parser.add_argument("--generated", type=int, default=0,
                        help="--scoring: also check this many small generated instances per id (default 0)")
    parser.add_argument("--adversarial", action="store_true",
                        help="--scoring: also play the adversarial probes (hold-back, re-planners, reference attack)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.scoring:
        return scoring_main(args.ids, args.seed, args.tries, args.generated, args.adversarial)
    ids = args.ids or registered_env_ids()
    print("| env | steps | episodes | legal | invalid tried | out of space | exceptions | contract |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    reports = []
    started = time.monotonic()
    for done, env_id in enumerate(ids, 1):
        report = check_contract(env_id, steps=args.steps, seed=args.seed)
        reports.append(report)
        print(report.row(), flush=True)
        print(progress_line(done, len(ids), env_id, time.monotonic() - started), file=sys.stderr, flush=True)
    total = ContractReport("total")
    for r in reports:
        total.steps += r.steps
        total.episodes += r.episodes
        total.legal_steps += r.legal_steps
        total.invalid_tried += r.invalid_tried
        total.out_of_space_tried += r.out_of_space_tried
        total.exceptions += r.exceptions
        total.failures += r.failures
    print(total.row())
    for r in reports:
        for note in r.notes():
            print(note)
        for failure in r.failures:
            print(f"{r.env_id}: {failure}", file=sys.stderr)
    return 0 if total.ok else 1
