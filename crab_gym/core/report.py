"""The benchmark report: summaries per (env, kwargs, policy), errors, JSON, Markdown and a plot.

A report is a pure function of its episodes, sorted by spec: the same episodes give the same
report whichever backend ran them and in whatever order they finished. Only the wall-clock
measurements differ between runs (:data:`WALL_CLOCK_FIELDS`); :meth:`BenchmarkReport.comparable`
drops exactly those, for comparing runs.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crab_gym.core.card import RunCard
from crab_gym.core.episode import EpisodeResult, canonical_json
from crab_gym.core.llm_report import LLM_LEGEND, Prices, llm_markdown, llm_summary
from crab_gym.core.unfinished import SCORE_METRICS, is_unfinished, measured_metrics, scored_value
from crab_gym.core.unfinished import is_number as _is_number

#: Columns the runner measures, then the REALM metrics, in table order.
RUNNER_COLUMNS = (
    "env", "policy", "kwargs", "episodes", "errors", "truncated", "return", "completeness", "success", "steps", "invalid", "time_s",
)
REALM_METRICS = SCORE_METRICS
#: Resource-usage columns (policies that report ``usage``, e.g. LLM agents), after the runner's.
USAGE_COLUMNS = ("llm_tokens", "llm_requests", "llm_latency_s")
#: Wall-clock measurements: the only values that differ between two runs of the same episodes
#: (summary columns ``time_s`` and ``llm_latency_s``, the LLM table's ``wall_s``; per episode ``wall_time_s``
#: and ``usage.latency_s``).
WALL_CLOCK_FIELDS = ("time_s", "llm_latency_s", "latency_s", "wall_time_s", "wall_s")
#: Columns that count things: printed as integers (means with one decimal when fractional).
COUNT_COLUMNS = ("episodes", "errors", "truncated", "steps", "invalid", "llm_tokens", "llm_requests")

#: What each column of the report means (the Markdown legend and the JSON ``columns``).
LEGEND: dict[str, str] = {
    "episodes": "episodes run (one per seed), including those that raised an error",
    "errors": "episodes that raised an exception (listed under Errors); they count as failures in "
    "`success` and are left out of every other mean",
    "truncated": "episodes the env did not end (cut by --max-steps, a time limit or the agent's step limit): "
    "they have no plan and count 0 in the mean of every REALM metric that applies to them (docs/evaluation.md)",
    "return": "mean episode return (REALM envs: progress_weight x completeness + optimality_weight x optimality)",
    "completeness": "mean share of the env's sub-goals passed at the end of the episode (progress: "
    "targets visited, groups served, passengers delivered, jobs completed); 1.0 = every sub-goal passed",
    "success": "share of episodes that reached a complete, feasible plan: terminated (not cut by a step "
    "limit) with every sub-goal passed and, when the env reports it, constraint_satisfaction = 1. "
    "A complete plan worse than the reference is a success with optimality < 1",
    "steps": "mean number of env steps per episode",
    "invalid": "mean number of invalid (rejected) actions per episode",
    "time_s": "mean wall-clock seconds per episode (measured by the runner, never by the env)",
    "llm_tokens": "REALM resource usage: mean LLM tokens per episode (prompt + completion, as the server counts them)",
    "llm_requests": "REALM resource usage: mean chat requests per episode (retries included)",
    "llm_latency_s": "REALM resource usage: mean seconds per episode spent waiting on the model (wall clock)",
    "planning_quality": "REALM: share of the problem's demands the plan serves",
    "optimality": "REALM: plan quality against the best plan known, in [0, 1]; 0 if infeasible or doing nothing",
    "constraint_satisfaction": "REALM: share of the plan's constraints that hold",
    "coordination": "REALM: multi-agent problems, what the joint plan gains from working together against a no-coordination baseline (per problem: docs/multiagent.md); n/a where nothing can be shared",
    "adaptation": "REALM: disruption problems, quality after disruptions against an adaptive oracle; n/a when no disruption struck",
}

def _mean(values: Iterable[float]) -> float | None:
    vals = list(values)
    return statistics.fmean(vals) if vals else None


def _cell(column: str, value: Any) -> str:
    """A table cell: counts as integers, seconds with 2 decimals, shares with 3."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value).replace("|", "\\|")  # a pipe would split the table cell
    if column in COUNT_COLUMNS:
        return str(int(value)) if float(value).is_integer() else f"{value:.1f}"
    if column in ("time_s", "llm_latency_s"):
        return f"{value:.2f}"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


@dataclass
class BenchmarkReport:
    """All episode results (kept sorted by spec), with summaries and writers.

    ``resumed`` counts the episodes a run found already stored instead of running them; it
    describes the run, not the results, so it is not part of the written report. ``prices``
    (per million tokens) price the LLM table's tokens (:mod:`crab_gym.core.llm_report`);
    ``baselines`` names the non-LLM policies, so that any other policy (an agent played over
    MCP, which counts no tokens) gets an LLM row too.
    """

    results: list[EpisodeResult]
    resumed: int = 0
    prices: Prices | None = None
    baselines: frozenset[str] | None = None
    #: the run's card (:class:`~crab_gym.core.card.RunCard` as JSON): what was run, with what
    #: budgets and versions, and the command that reruns it; it opens report.md and report.json
    card: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.results = sorted(self.results, key=lambda r: r.spec.sort_key)

    @property
    def n_errors(self) -> int:
        """Episodes that raised."""
        return sum(r.error is not None for r in self.results)

    def summary(self) -> list[dict[str, Any]]:
        """One row per (env, kwargs, policy): counts, and means over the episodes that did
        not raise (``None`` when every episode raised); ``success`` is over all episodes. An
        episode the env did not end (``truncated``) counts 0 in the mean of each REALM metric
        that applies to it (:mod:`crab_gym.core.unfinished`)."""
        groups: dict[tuple[str, str, str], list[EpisodeResult]] = {}
        measured = measured_metrics(self.results, lambda r: (r.env_id, _kwargs_key(r.env_kwargs)))
        for r in self.results:
            key = (r.env_id, _kwargs_key(r.env_kwargs), r.policy)
            groups.setdefault(key, []).append(r)
        return [_summary_row(key, all_rs, measured[key[:2]]) for key, all_rs in groups.items()]

    def llm_summary(self) -> list[dict[str, Any]]:
        """The LLM table: one row per model x env (x kwargs) of the policies that report
        ``usage``: feasible and optimal rates, optimality over feasible plans only, tokens,
        requests, wall time and cost (see :mod:`crab_gym.core.llm_report`)."""
        return llm_summary(self.results, self.prices, self.baselines)

    def error_groups(self) -> list[dict[str, Any]]:
        """The errors, one entry per (env, kwargs, policy, error) with the seeds it hit."""
        groups: dict[tuple[str, str, str, str], list[int]] = {}
        for r in self.results:
            if r.error is not None:
                key = (r.env_id, _kwargs_key(r.env_kwargs), r.policy, r.error)
                groups.setdefault(key, []).append(r.seed)
        return [
            {"env": e, "kwargs": k, "policy": p, "error": err, "count": len(seeds), "seeds": seeds}
            for (e, k, p, err), seeds in groups.items()
        ]

    def to_markdown(self, *, legend: bool = True) -> str:
        """A Markdown table of :meth:`summary` (the runner's columns and the REALM metrics;
        problem-specific metrics stay in the JSON report), the errors, and (``legend``) what
        each column means."""
        rows = self.summary()
        if not rows:
            return "(no episodes)\n"

        present = {k for row in rows for k in row}
        columns = [c for c in (*RUNNER_COLUMNS, *USAGE_COLUMNS, *REALM_METRICS) if c in present]
        if all(row["kwargs"] == "{}" for row in rows):
            columns.remove("kwargs")
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for row in rows:
            lines.append("| " + " | ".join(_cell(c, row.get(c)) for c in columns) + " |")
        errors = self.error_groups()
        if errors:
            lines += ["", f"**Errors** ({self.n_errors} of {len(self.results)} episodes raised):", ""]
            for g in errors:
                kwargs = "" if g["kwargs"] == "{}" else f" {g['kwargs']}"
                seeds = ", ".join(str(s) for s in g["seeds"])
                lines.append(
                    f"- {g['env']}{kwargs} x {g['policy']}: {g['count']} episode(s) (seed {seeds}): "
                    f"{_one_line(g['error'])}"
                )
        if self.card:
            lines += ["", *RunCard.from_json(self.card).markdown(self.spent())]
        if legend:
            lines += ["", "**Columns**", ""]
            lines += [f"- `{c}`: {LEGEND[c]}" for c in columns if c in LEGEND]
        llm = llm_markdown(self.llm_summary(), self.prices, legend=legend)
        if llm:
            lines += ["", *llm]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "summary": self.summary(),
            "errors": self.error_groups(),
            "episodes": [r.to_dict() for r in self.results],
            "columns": dict(LEGEND),
        }
        llm = self.llm_summary()
        if llm:
            data["llm_summary"] = llm
            data["llm_columns"] = dict(LLM_LEGEND)
        if self.prices:
            data["prices"] = self.prices.to_json()
        if self.card:
            data["card"] = {**self.card, "spent": self.spent()}
        return data

    def spent(self) -> dict[str, Any]:
        """The budgets the episodes spent: wall time, and an LLM's tokens and requests."""
        out: dict[str, Any] = {"episodes": len(self.results),
                               "wall time": f"{sum(r.wall_time_s for r in self.results):.0f} s"}
        tokens = sum(_tokens(r.usage) for r in self.results if r.usage)
        if tokens:
            out["tokens"] = int(tokens)
        return out

    def comparable(self) -> dict[str, Any]:
        """:meth:`to_json` without the wall-clock values: equal for two runs of the same
        episodes, whatever backend and worker count ran them."""
        return strip_wall_clock(self.to_json())

    def write(self, directory: str | Path) -> dict[str, Path]:
        """Write ``report.json`` and ``report.md`` into ``directory``; return their paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "report.json", "markdown": out / "report.md"}
        paths["json"].write_text(json.dumps(self.to_json(), indent=2, default=str))
        paths["markdown"].write_text(self.to_markdown())
        return paths

    def plot(self, path: str | Path, metric: str | Sequence[str] | None = None) -> Path:
        """Bar charts per env and policy, one panel per metric (needs the ``viz`` extra).

        ``metric``: one column or several; default ``return`` and every REALM metric some row
        has (``n/a`` values are left out, as in the table's means)."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on extras
            raise ImportError('plotting needs matplotlib: pip install "crab_gym[viz]"') from exc
        rows = self.summary()
        metrics = self.plotted_metrics() if metric is None else [metric] if isinstance(metric, str) else list(metric)
        envs = list(dict.fromkeys(r["env"] for r in rows))
        fig, axes = plt.subplots(len(metrics), 1, figsize=(max(4, 1.5 * len(envs)), 2.4 * len(metrics) + 0.8),
                                 squeeze=False, sharex=True)
        for ax, name in zip(axes[:, 0], metrics):
            _bars(ax, rows, envs, name)
        axes[0, 0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        axes[-1, 0].set_xticks([i + 0.4 - _bar_width(rows) / 2 for i in range(len(envs))], envs, rotation=20, ha="right")
        fig.tight_layout()
        target = Path(path)
        fig.savefig(target, dpi=120)
        plt.close(fig)
        return target

    def plotted_metrics(self) -> list[str]:
        """What :meth:`plot` draws by default: ``return``, then the REALM metrics some row has a value of."""
        rows = self.summary()
        return ["return", *(m for m in REALM_METRICS if any(_is_number(r.get(m)) for r in rows))]


def _summary_row(key: tuple[str, str, str], all_rs: list[EpisodeResult], applies: set[str]) -> dict[str, Any]:
    """The summary row of one (env, kwargs, policy); ``applies``: the REALM metrics a finished
    episode of the env and kwargs measured (what an unfinished one without them scores 0 on)."""
    env_id, kwargs, policy = key
    rs = [r for r in all_rs if r.error is None]
    unfinished = sum(is_unfinished(r) for r in rs)
    metric_names = sorted({k for r in rs for k, v in r.metrics.items() if _is_number(v)}
                          | (applies if unfinished else set()))
    row: dict[str, Any] = {
        "env": env_id,
        "kwargs": kwargs,
        "policy": policy,
        "episodes": len(all_rs),
        "errors": len(all_rs) - len(rs),
        "truncated": unfinished,
        "return": _mean(r.episode_return for r in rs),
        "completeness": _mean(r.completeness for r in rs),
        "success": statistics.fmean(float(r.success and r.error is None) for r in all_rs),
        "steps": _mean(r.steps for r in rs),
        "invalid": _mean(r.invalid_actions for r in rs),
        "time_s": statistics.fmean(r.wall_time_s for r in all_rs),
    }
    if any(r.usage for r in all_rs):
        row["llm_tokens"] = _mean(_tokens(r.usage) for r in all_rs)
        row["llm_requests"] = _mean(float(r.usage.get("requests", 0)) for r in all_rs)
        row["llm_latency_s"] = _mean(float(r.usage.get("latency_s", 0.0)) for r in all_rs)
    for name in metric_names:
        row[name] = _mean(v for v in (scored_value(r, name, applies) for r in rs) if v is not None)
    return row


def _bar_width(rows: list[dict[str, Any]]) -> float:
    return 0.8 / max(len({r["policy"] for r in rows}), 1)


def _bars(ax: Any, rows: list[dict[str, Any]], envs: list[str], metric: str) -> None:
    """One panel: a bar per (env, policy) with the mean of ``metric`` over its rows."""
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    width = _bar_width(rows)
    for j, pol in enumerate(policies):
        xs, ys = [], []
        for i, env_id in enumerate(envs):
            vals = [r.get(metric) for r in rows if r["env"] == env_id and r["policy"] == pol]
            vals = [v for v in vals if _is_number(v)]
            if vals:
                xs.append(i + j * width)
                ys.append(statistics.fmean(vals))
        ax.bar(xs, ys, width=width, label=pol)
    ax.set_ylabel(metric)


def strip_wall_clock(report_json: Mapping[str, Any]) -> dict[str, Any]:
    """A written report (``report.json``'s content) without :data:`WALL_CLOCK_FIELDS`, at any depth,
    and without the run's card (the command and date of a run, not what its episodes measured)."""

    def strip(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: strip(v) for k, v in value.items() if k not in WALL_CLOCK_FIELDS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    stripped = strip({k: v for k, v in report_json.items() if k != "card"})
    stripped["columns"] = {k: v for k, v in report_json.get("columns", {}).items()}  # the legend stays whole
    return stripped


def _tokens(usage: Mapping[str, Any]) -> float:
    total = usage.get("total_tokens")
    if total is None:
        total = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return float(total)


def _kwargs_key(kwargs: Mapping[str, Any]) -> str:
    """An env's kwargs as the report shows and groups them (canonical JSON)."""
    return canonical_json(kwargs)


