"""The benchmark report: summaries per (env, split, kwargs, policy) with 95 % intervals, a
per-size breakdown, statistics across seeds, errors, JSON, Markdown and a plot.

A report is a pure function of its episodes, sorted by spec: the same episodes give the same
report whichever backend ran them and in whatever order they finished; its bootstrap draws
come from a fixed seed (:mod:`crab_gym.evaluation.stats`). Only the wall-clock measurements differ
between runs (:data:`WALL_CLOCK_FIELDS`); :meth:`BenchmarkReport.comparable` drops exactly
those, for comparing runs. The rows themselves are built in :mod:`crab_gym.evaluation.report_rows`.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crab_gym.evaluation.card import RunCard
from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.llm_report import LLM_LEGEND, Prices, llm_markdown, llm_summary
from crab_gym.evaluation.outcome import AGENT_FAILED, is_infra_failure
from crab_gym.evaluation.report_rows import CI_METRICS, group_key, report_tables, summary_rows, usage_tokens
from crab_gym.evaluation.stats import LEVEL, RESAMPLES, SEED
from crab_gym.evaluation.terminal import LEGEND_HINT, terminal_table
from crab_gym.evaluation.unfinished import SCORE_METRICS
from crab_gym.evaluation.unfinished import is_number as _is_number

#: Columns the runner measures, then the REALM metrics, in table order.
RUNNER_COLUMNS = (
    "env", "policy", "kwargs", "split", "episodes", "instances", "infra_errors", "agent_errors", "truncated",
    "return", "completeness", "success", "steps", "invalid", "time_s",
)
REALM_METRICS = SCORE_METRICS
#: Resource-usage columns (policies that report ``usage``, e.g. LLM agents), after the runner's.
USAGE_COLUMNS = ("llm_tokens", "llm_requests", "llm_latency_s")
#: The per-size table's columns (before the REALM metrics).
SIZE_COLUMNS = ("env", "policy", "kwargs", "split", "size", "episodes", "instances", "infra_errors", "agent_errors",
                "truncated", "return", "completeness", "success")
#: The table across seeds.
SEED_COLUMNS = ("env", "policy", "kwargs", "split", "instances", "seeds", "pass@1", "pass@k", "return_seed_std")
#: Wall-clock measurements: the only values that differ between two runs of the same episodes
#: (summary columns ``time_s`` and ``llm_latency_s``, the LLM table's ``wall_s``; per episode ``wall_time_s``
#: and ``usage.latency_s``).
WALL_CLOCK_FIELDS = ("time_s", "llm_latency_s", "latency_s", "wall_time_s", "wall_s")
#: Columns that count things: printed as integers (means with one decimal when fractional).
COUNT_COLUMNS = ("episodes", "instances", "infra_errors", "agent_errors", "truncated", "steps", "invalid", "seeds",
                 "llm_tokens", "llm_requests")

#: What each column of the report means (the Markdown legend and the JSON ``columns``).
LEGEND: dict[str, str] = {
    "split": "the instance split the row's episodes played (test, dev, quick, a size class, a folder; "
    "`custom` for --instances); the row pools every instance of it",
    "episodes": "episodes run (one per instance and seed), infrastructure failures included",
    "instances": "distinct instances the row's episodes played",
    "infra_errors": "infrastructure failures: episodes where the env, a solver, the worker or the model API raised "
    "(listed under Errors). They measured nothing about the agent: left out of every mean, "
    "`success` included; `crab-gym run --retry-errors` runs them again",
    "agent_errors": "episodes the agent's own code raised in (listed under Errors): agent failures, counted in "
    "every mean as an episode without a plan (shown when some row has one)",
    "truncated": "episodes the env did not end (cut by --max-steps, a time limit or the agent's step limit): "
    "agent failures without a plan, counting 0 in the mean of every REALM metric that applies to them "
    "(docs/evaluation.md)",
    "return": "mean episode return (REALM envs: progress_weight x completeness + optimality_weight x optimality)",
    "completeness": "mean share of the env's sub-goals passed at the end of the episode (progress: "
    "targets visited, groups served, passengers delivered, jobs completed); 1.0 = every sub-goal passed",
    "success": "share of episodes that reached a complete, feasible plan (over the measured episodes: "
    "infrastructure failures left out): terminated (not cut by a step limit) with every sub-goal passed and, "
    "when the env reports it, constraint_satisfaction = 1. "
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
    "intervals": f"`0.812 [0.78, 0.84]`: a mean and its {LEVEL:.0%} interval (bounds rounded outward), from a "
    f"two-level bootstrap: {RESAMPLES} resamples of the row's instances with replacement, then of each drawn "
    f"instance's seeds; seeds only when the row has one instance; fixed seed {SEED}, so the same episodes give "
    "the same intervals. No interval with a single value. Given for return, completeness, success and the REALM metrics",
    "size": "the instances' size class (small / medium / large; P11: jobs x machines)",
    "seeds": "the fewest measured seeds (episodes) an instance of the row has",
    "pass@1": "mean over instances of the share of seeds that succeeded (the unbiased pass@k at k = 1)",
    "pass@k": "mean over instances of the unbiased pass@k = 1 - C(n-c, k) / C(n, k) (n seeds, c successes) at "
    "k = seeds: the chance that one of k tries succeeds; n/a where every instance has one seed",
    "return_seed_std": "mean over instances of the standard deviation of return across seeds (how much the "
    "seed alone moves the result); n/a with one seed per instance",
}

#: What the JSON says of the intervals.
BOOTSTRAP = {
    "level": LEVEL, "resamples": RESAMPLES, "seed": SEED, "metrics": list(CI_METRICS),
    "method": "percentile interval of the mean; two-level bootstrap: instances with replacement, then the seeds "
    "of each drawn instance with replacement (seeds only for one instance); none for a single value",
}


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


def _mean_cell(row: Mapping[str, Any], column: str) -> str:
    """A mean with its interval when it has one: ``0.812 [0.78, 0.84]``."""
    text = _cell(column, row.get(column))
    ci = (row.get("ci") or {}).get(column)
    if ci is None or not _is_number(row.get(column)):
        return text
    return f"{text} [{math.floor(ci[0] * 100 + 1e-9) / 100:.2f}, {math.ceil(ci[1] * 100 - 1e-9) / 100:.2f}]"


def _seed_cell(row: Mapping[str, Any], column: str) -> str:
    passes = row.get("pass_at_k") or {}
    if column == "pass@1":
        return _cell(column, passes.get("1"))
    if column == "pass@k":
        k = row.get("seeds")
        return "n/a" if str(k) not in passes else f"{_cell(column, passes[str(k)])} (k={k})"
    return _cell(column, row.get(column))


def _summary_cell(row: Mapping[str, Any], column: str) -> str:
    return _mean_cell(row, column) if column in CI_METRICS else _cell(column, row.get(column))


#: Counts a terminal table leaves out where every row has none (report.md keeps them).
QUIET_COUNTS = ("infra_errors", "agent_errors", "truncated", "invalid")


def _terminal_cell(row: Mapping[str, Any], column: str) -> str:
    """A terminal cell: the env's short id (``P3``), a mean above the wider half of its 95 %
    interval (``±0.03``; two lines, so that the columns stay narrow: report.md has the exact
    interval), else the Markdown cell."""
    if column == "env":
        return str(row.get("env", "")).removeprefix("Realm-").removesuffix("-v0")
    text = _cell(column, row.get(column))
    ci = (row.get("ci") or {}).get(column)
    if column not in CI_METRICS or ci is None or not _is_number(row.get(column)):
        return text
    half = max(float(row[column]) - ci[0], ci[1] - float(row[column]))  # the wider side: never understated
    return f"{text}\n±{math.ceil(half * 100 - 1e-9) / 100:.2f}"


def _shown(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[str]:
    """The columns a table shows: those its rows have, less what says nothing: ``kwargs`` when
    every row has none, ``split`` and ``instances`` when no row played a split (a report of a
    run without one looks as before), ``agent_errors`` when no agent raised."""
    present = {k for row in rows for k in row} | {"pass@1", "pass@k"}
    hidden = set()
    if all(row.get("kwargs") == "{}" for row in rows):
        hidden.add("kwargs")
    if all(row.get("split") is None for row in rows):
        hidden |= {"split", "instances"}
    if not any(row.get("agent_errors") for row in rows):
        hidden.add("agent_errors")
    return [c for c in columns if c in present and c not in hidden]


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], cell: Any) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(cell(row, c) for c in columns) + " |" for row in rows]


def _episodes_text(group: Mapping[str, Any]) -> str:
    """``seed 1, 3`` or, for a split, ``p1_small_03 seed 1, p1_small_04 seed 0``."""
    if all(i is None for i in group["instances"]):
        return "seed " + ", ".join(str(s) for s in group["seeds"])
    return ", ".join(f"{i} seed {s}" for i, s in zip(group["instances"], group["seeds"]))


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


@dataclass
class BenchmarkReport:
    """All episode results (kept sorted by spec), with summaries and writers.

    ``resumed`` counts the episodes a run found already stored instead of running them; it
    describes the run, not the results, so it is not part of the written report. ``prices``
    (per million tokens) price the LLM table's tokens (:mod:`crab_gym.evaluation.llm_report`);
    ``baselines`` names the non-LLM policies, so that any other policy (an agent played over
    MCP, which counts no tokens) gets an LLM row too.
    """

    results: list[EpisodeResult]
    resumed: int = 0
    prices: Prices | None = None
    baselines: frozenset[str] | None = None
    #: the run's card (:class:`~crab_gym.evaluation.card.RunCard` as JSON): what was run, with what
    #: budgets and versions, and the command that reruns it; it opens report.md and report.json
    card: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.results = sorted(self.results, key=lambda r: r.spec.sort_key)

    @property
    def n_errors(self) -> int:
        """Episodes that raised (infrastructure and agent failures alike)."""
        return sum(r.error is not None for r in self.results)

    @property
    def n_infra_errors(self) -> int:
        """Infrastructure failures: what ``--retry-errors`` runs again."""
        return sum(is_infra_failure(r) for r in self.results)

    def summary(self) -> list[dict[str, Any]]:
        """One row per (env, split, kwargs without the instance, policy): a split's episodes
        over all its instances form one row. Counts by outcome, means over the measured
        episodes (all but the infrastructure failures; ``None`` when there is none) with their
        95 % intervals under ``ci``, and the statistics across seeds. An episode the env did
        not end (``truncated``) counts 0 in the mean of each REALM metric that applies to it on
        its instance (:mod:`crab_gym.evaluation.unfinished`)."""
        return summary_rows(self.results)

    def by_size(self) -> list[dict[str, Any]]:
        """The same rows per size class too (episodes whose size is known)."""
        return summary_rows(self.results, by_size=True)

    def llm_summary(self) -> list[dict[str, Any]]:
        """The LLM table: one row per model x env (x split, kwargs) of the policies that report
        ``usage``: feasible and optimal rates, optimality over feasible plans only, tokens,
        requests, wall time and cost (see :mod:`crab_gym.evaluation.llm_report`)."""
        return llm_summary(self.results, self.prices, self.baselines)

    def error_groups(self) -> list[dict[str, Any]]:
        """The errors, one entry per (env, split, kwargs, policy, outcome, error) with the
        episodes it hit (``seeds`` and ``instances``, one entry per episode)."""
        groups: dict[tuple[Any, ...], list[EpisodeResult]] = {}
        for r in self.results:
            if r.error is not None:
                groups.setdefault((*group_key(r), r.outcome, r.error), []).append(r)
        return [
            {"env": e, "split": split, "kwargs": k, "policy": p, "outcome": outcome, "error": err, "count": len(rs),
             "seeds": [r.seed for r in rs], "instances": [r.instance for r in rs]}
            for (e, split, k, p, outcome, err), rs in groups.items()
        ]

    def to_markdown(self, *, legend: bool = True) -> str:
        """Markdown: the summary table (the runner's columns and the REALM metrics, means
        with their intervals; problem-specific metrics stay in the JSON report), the per-size
        table, the table across seeds, the errors, and (``legend``) what each column means."""
        rows, sizes = report_tables(self.results)
        if not rows:
            return "(no episodes)\n"
        columns = _shown(rows, (*RUNNER_COLUMNS, *USAGE_COLUMNS, *REALM_METRICS))
        lines = _table(rows, columns, _summary_cell)
        size_columns = _shown(sizes, (*SIZE_COLUMNS, *REALM_METRICS))
        if sizes:
            lines += ["", "**By size**", "", *_table(sizes, size_columns, _summary_cell)]
        seed_columns = _shown(rows, SEED_COLUMNS)
        if any(row["pass_at_k"] for row in rows):
            lines += ["", "**Across seeds**", "", *_table(rows, seed_columns, _seed_cell)]
        lines += self._error_lines()
        if self.card:
            lines += ["", *RunCard.from_json(self.card).markdown(self.spent())]
        if legend:
            described = dict.fromkeys([*columns, "intervals", *(size_columns if sizes else ()),
                                       *(seed_columns if any(row["pass_at_k"] for row in rows) else ())])
            lines += ["", "**Columns**", ""]
            lines += [f"- `{c}`: {LEGEND[c]}" for c in described if c in LEGEND]
        llm = llm_markdown(self.llm_summary(), self.prices, legend=legend)
        if llm:
            lines += ["", *llm]
        return "\n".join(lines) + "\n"

    def to_terminal(self, width: int | None = None, color: bool = False) -> str:
        """What a terminal shows: the summary and per-size tables drawn at the screen's
        ``width`` (rich, :mod:`~crab_gym.evaluation.terminal`), the errors, and one line saying
        where the rest is (the table across seeds, the run card, the legend: report.md)."""
        rows, sizes = report_tables(self.results)
        if not rows:
            return "(no episodes)\n"
        out = [self._terminal_table(rows, (*RUNNER_COLUMNS, *USAGE_COLUMNS, *REALM_METRICS), width, color)]
        if sizes:
            out.append(self._terminal_table(sizes, (*SIZE_COLUMNS, *REALM_METRICS), width, color, "by size"))
        errors = self._error_lines()
        if errors:
            out.append("\n".join(errors[1:]) + "\n")
        return "\n".join(out) + f"\n{LEGEND_HINT}\n"

    @staticmethod
    def _terminal_table(rows: list[dict[str, Any]], columns: Sequence[str], width: int | None, color: bool,
                        title: str | None = None) -> str:
        """One table of :meth:`to_terminal`, less the counts that are 0 in every row."""
        shown = [c for c in _shown(rows, columns) if not (c in QUIET_COUNTS and all(not row.get(c) for row in rows))]
        return terminal_table(rows, shown, _terminal_cell, width=width, color=color, title=title)

    def legend_markdown(self) -> str:
        """What each column means (the legend of :meth:`to_markdown`), on its own."""
        full = self.to_markdown(legend=True)
        return full[full.index("**Columns**"):] if "**Columns**" in full else ""

    def _error_lines(self) -> list[str]:
        """The **Errors** list: one line per group, infrastructure failures apart from the agent's."""
        errors = self.error_groups()
        if not errors:
            return []
        infra, agent = self.n_infra_errors, self.n_errors - self.n_infra_errors
        parts = [f"{infra} infrastructure failure(s), left out of the means"] if infra else []
        parts += [f"{agent} raised by the agent, counted as failures"] if agent else []
        lines = ["", f"**Errors** ({self.n_errors} of {len(self.results)} episodes raised: {'; '.join(parts)}):", ""]
        for g in errors:
            where = "".join(f" {x}" for x in (f"[{g['split']}]" if g["split"] else "",
                                              g["kwargs"] if g["kwargs"] != "{}" else "") if x)
            who = " (agent)" if g["outcome"] == AGENT_FAILED else ""
            lines.append(f"- {g['env']}{where} x {g['policy']}{who}: {g['count']} episode(s) ({_episodes_text(g)}): "
                         f"{_one_line(g['error'])}")
        return lines

    def to_json(self) -> dict[str, Any]:
        rows, sizes = report_tables(self.results)
        data: dict[str, Any] = {
            "summary": rows,
            "by_size": sizes,
            "errors": self.error_groups(),
            "episodes": [r.to_dict() for r in self.results],
            "columns": dict(LEGEND),
            "bootstrap": dict(BOOTSTRAP),
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
        tokens = sum(usage_tokens(r.usage) for r in self.results if r.usage)
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
        _write_whole(paths["json"], json.dumps(self.to_json(), indent=2, default=str))
        _write_whole(paths["markdown"], self.to_markdown())
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


def _bar_width(rows: list[dict[str, Any]]) -> float:
    return 0.8 / max(len({r["policy"] for r in rows}), 1)


def _bars(ax: Any, rows: list[dict[str, Any]], envs: list[str], metric: str) -> None:
    """One panel: a bar per (env, policy) with the mean of ``metric`` over its rows, outlined
    so that a mean of 0 shows as a line; where the metric does not apply (every value n/a)
    the slot says ``n/a`` instead of staying empty like a 0."""
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    width = _bar_width(rows)
    for j, pol in enumerate(policies):
        xs, ys, missing = [], [], []
        for i, env_id in enumerate(envs):
            played = [r.get(metric) for r in rows if r["env"] == env_id and r["policy"] == pol]
            vals = [v for v in played if _is_number(v)]
            if vals:
                xs.append(i + j * width)
                ys.append(statistics.fmean(vals))
            elif played:
                missing.append(i + j * width)
        bars = ax.bar(xs, ys, width=width, label=pol, linewidth=1.2)
        for bar in bars:
            bar.set_edgecolor(bar.get_facecolor())
        for x in missing:
            ax.text(x, 0.02, "n/a", rotation=90, ha="center", va="bottom", fontsize="small", color="0.35")
    ax.set_ylabel(metric)


def _write_whole(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a full disk must not leave half a report.json): into
    a temporary file beside it, then renamed over it."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text)
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)
        raise


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
