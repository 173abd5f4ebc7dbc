"""The reference results as data: rows with intervals, the episodes behind them, and the card.

``reference.json`` (shipped in this package) keeps, besides the summary rows, a compact record
of every episode: enough for ``crab-gym report --compare reference`` to pair a user's run with
the baselines instance by instance, and for a test to replay a sample and demand the same
numbers. :func:`results_from_report` builds it from the regeneration's report;
:func:`load_reference` reads the shipped one.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.report import BenchmarkReport
from crab_gym.evaluation.unfinished import SCORE_METRICS, is_number

#: The shipped results, in this package (gzip: every episode is in it, 2,300 of them).
REFERENCE_FILE = "reference.json.gz"
#: The columns of a reference row (means, each with its interval under ``ci``).
ROW_MEANS = ("return", "completeness", "success", *SCORE_METRICS)
#: What a compact episode record keeps.
EPISODE_FIELDS = ("env_id", "policy", "split", "instance", "size", "seed", "episode_return", "completeness",
                  "success", "terminated", "truncated", "steps", "invalid_actions", "error")
#: Version of the file's layout (a reader refuses a layout it does not know).
SCHEMA = 1


def compact_episode(result: EpisodeResult) -> dict[str, Any]:
    """An episode as the results file keeps it: its identity, its return and its score metrics."""
    record = {name: getattr(result, name) for name in EPISODE_FIELDS}
    record["metrics"] = {m: result.metrics.get(m) for m in SCORE_METRICS if m in result.metrics}
    return record


def episode_from_compact(record: Mapping[str, Any]) -> EpisodeResult:
    """The :class:`EpisodeResult` a compact record stands for (no wall time, no traceback)."""
    fields = {k: v for k, v in record.items() if k in EPISODE_FIELDS}
    env_kwargs = {"instance": record["instance"]} if record.get("instance") else {}
    return EpisodeResult(env_kwargs=env_kwargs, metrics=dict(record.get("metrics", {})), **fields)


def reference_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A report summary row cut to what the table shows: counts, means and their intervals."""
    keep = ("env", "split", "policy", "episodes", "instances", "infra_errors", "truncated")
    out = {k: row[k] for k in keep if k in row}
    out.update({m: row[m] for m in ROW_MEANS if is_number(row.get(m))})
    out["ci"] = {m: v for m, v in (row.get("ci") or {}).items() if m in out and v is not None}
    return out


def results_from_report(report: BenchmarkReport, *, command: str, tracks: Mapping[str, str],
                        wall_s: float | None = None, env_order: Sequence[str] = ()) -> dict[str, Any]:
    """The results file's content: the card, one row per env x policy (envs in ``env_order``,
    policies in the order of ``tracks``: the floor first, the oracle last), the episodes."""
    summary = [reference_row(r) for r in report.summary()]
    envs = list(dict.fromkeys([*env_order, *(r["env"] for r in summary)]))
    policies = {name: k for k, name in enumerate(tracks)}
    rows = sorted(summary, key=lambda r: (envs.index(r["env"]), policies.get(r["policy"], len(policies))))
    for row in rows:
        row["track"] = tracks.get(row["policy"], "solver-free")
    return {
        "schema": SCHEMA,
        "command": command,
        "card": dict(report.card or {}),
        "regeneration_wall_s": wall_s,
        "rows": rows,
        "episodes": [compact_episode(r) for r in report.results],
    }


def load_reference(path: str | Path | None = None) -> dict[str, Any]:
    """The shipped reference results (or the results file at ``path``)."""
    if path is None:
        raw = resources.files("crab_gym.results").joinpath(REFERENCE_FILE).read_bytes()
        where = f"crab_gym/results/{REFERENCE_FILE}"
    else:
        raw, where = Path(path).read_bytes(), str(path)
    data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"{where}: field 'schema' is {data.get('schema') if isinstance(data, dict) else None!r}, "
                         f"expected {SCHEMA} (a results file of another crab_gym version)")
    return data


def reference_report(data: Mapping[str, Any]) -> BenchmarkReport:
    """The shipped episodes as a report (its rows are the shipped rows, recomputed)."""
    return BenchmarkReport([episode_from_compact(e) for e in data["episodes"]], card=data.get("card"))


def rows_by_env(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """The rows grouped by env, in their order."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["env"], []).append(row)
    return out
