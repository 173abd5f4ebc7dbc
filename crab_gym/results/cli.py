"""``crab-gym results``: regenerate the reference results table (resumable), and install it.

    crab-gym results --workers 2 --out runs/reference            # every id; run again to resume
    crab-gym results --workers 2 --out runs/reference --install  # also the shipped file and docs page

The run is ``crab-gym run``'s (:mod:`crab_gym.results.plan`): episodes stream to
``DIR/episodes.jsonl`` and a killed regeneration resumes where it stopped. ``DIR/results.json``
and ``DIR/results.md`` are written at the end; ``--install`` copies them over the shipped
``crab_gym/results/reference.json`` and ``docs/results.md`` (a source checkout's).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from typing import Any

from crab_gym.evaluation.episode_store import EpisodeStoreError
from crab_gym.results.page import results_figure, results_markdown
from crab_gym.results.plan import RANDOM_SEEDS, SPLIT, reference_benchmark
from crab_gym.results.table import REFERENCE_FILE, results_from_report
from crab_gym.run_card import run_card, write_card

#: The command that regenerates the shipped table (what the page and the file name).
COMMAND = "crab-gym results --workers 2 --out runs/reference --install"
#: A source checkout's root (``--install`` writes there).
CHECKOUT = Path(__file__).resolve().parents[2]


def add_results_parser(sub: Any) -> None:
    """``crab-gym results``."""
    p = sub.add_parser(
        "results", help="regenerate the reference results table (every baseline on every test split)",
        description="Run do-nothing, random (5 seeds), every heuristic and the oracle on every REALM id's test "
        "split, resumably, and write results.json and results.md (the reference results table) into --out.",
    )
    p.add_argument("--env", nargs="+", default=None, metavar="ID", help="only these ids (default: every REALM id)")
    p.add_argument("--workers", type=int, default=None, metavar="N", help="episodes at a time (default: 1)")
    p.add_argument("--out", default="runs/reference", metavar="DIR",
                   help="the run's directory (episodes.jsonl, report, results; default: %(default)s)")
    p.add_argument("--install", action="store_true",
                   help=f"also write crab_gym/results/{REFERENCE_FILE} and docs/results.md(.png) of this checkout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_results)


def cmd_results(args: argparse.Namespace) -> int:
    """Run (or resume) the reference run, then write its results; see the module docstring."""
    if args.install and not (CHECKOUT / "docs").is_dir():
        return _usage(f"--install writes the docs of a source checkout; {CHECKOUT} has no docs/ folder")
    if args.workers is not None and args.workers < 1:
        return _usage(f"--workers must be at least 1, got {args.workers}")
    bench, policies = reference_benchmark(args.env, workers=args.workers)
    card = run_card(getattr(args, "argv", ["results"]), bench.cases, RANDOM_SEEDS, bench.max_steps, list(policies),
                    "solver-free", {}, None).to_json()
    card["seeds"] = {name: list(bench.policy_seeds.get(name, bench.seeds)) for name in policies}
    write_card(args.out, card)
    start = time.perf_counter()
    try:
        report = bench.run(policies, progress=not args.quiet, out=args.out,
                           log=lambda message: print(f"crab-gym results: {message}", file=sys.stderr))
    except EpisodeStoreError as exc:
        return _usage(f"{exc} (fix or remove that line, or use another --out)")
    report.card = card
    data = results_from_report(report, command=COMMAND, tracks=card["tracks"],
                               wall_s=_wall(Path(args.out), report, time.perf_counter() - start),
                               env_order=[case.env_id for case in bench.cases])
    written = _write(Path(args.out), data, report)
    if args.install:
        written += _install(Path(args.out), data)
    for path in written:
        print(f"wrote {path}")
    if report.n_errors:
        print(f"crab-gym results: {report.n_errors} episodes raised an error (listed in {args.out}/report.md)",
              file=sys.stderr)
        return 1
    return 0


def _wall(out: Path, report: Any, seconds: float) -> float | None:
    """The regeneration's wall time: this run's when it ran every episode (kept in
    ``DIR/wall.json``), the kept one when it ran none (the table rebuilt from a whole run),
    None when it resumed part of a run (no measure of a regeneration)."""
    kept = out / "wall.json"
    if report.resumed == 0:
        kept.write_text(json.dumps({"wall_s": seconds}))
        return seconds
    if report.resumed == len(report.results) and kept.exists():
        return float(json.loads(kept.read_text())["wall_s"])
    return None


def _usage(message: str) -> int:
    print(f"crab-gym results: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _write(out: Path, data: dict[str, Any], report: Any) -> list[Path]:
    paths = report.write(out)
    (out / "results.json").write_text(json.dumps(data, indent=1, default=str))
    (out / "results.md").write_text(results_markdown(data))
    written = [paths["json"], out / "results.json", out / "results.md"]
    try:
        written.append(results_figure(data, out / "results.png"))
    except ImportError:  # the viz extra is missing: the table is all there is
        pass
    return written


def _install(out: Path, data: dict[str, Any]) -> list[Path]:
    """Copy the results over the shipped file and the docs page of this checkout."""
    shipped = CHECKOUT / "crab_gym" / "results" / REFERENCE_FILE
    text = json.dumps(data, separators=(",", ":"), default=str) + "\n"
    shipped.write_bytes(gzip.compress(text.encode(), mtime=0))  # mtime 0: the same table, the same bytes
    page = CHECKOUT / "docs" / "results.md"
    page.write_text(results_markdown(data))
    written = [shipped, page]
    if (out / "results.png").exists():
        figure = CHECKOUT / "docs" / "results.png"
        figure.write_bytes((out / "results.png").read_bytes())
        written.append(figure)
    return written


__all__ = ["COMMAND", "SPLIT", "add_results_parser", "cmd_results"]
