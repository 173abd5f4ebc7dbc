"""Benchmark: run a policy over envs/tasks and report returns, sub-goals and REALM metrics.

The runner (not the env) measures wall-clock time, so envs stay deterministic and their
``info`` comparable across runs. Reports are written as JSON (for analysis) and a Markdown
table (for people); a plot is available with the ``viz`` extra.

An episode that raises never loses the others: it is recorded with its error and the run
goes on (see :attr:`EpisodeResult.error`, :meth:`BenchmarkReport.error_groups`). A Ctrl-C
still stops the run; the :class:`KeyboardInterrupt` then carries the episodes finished so
far as ``partial_report``.
"""

from __future__ import annotations

import json
import math
import statistics
import time
import traceback as tb
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym

#: Columns the runner measures, then the REALM metrics, in table order.
RUNNER_COLUMNS = (
    "env", "policy", "kwargs", "episodes", "errors", "return", "completeness", "success", "steps", "invalid", "time_s",
)
REALM_METRICS = ("planning_quality", "optimality", "constraint_satisfaction", "coordination", "adaptation")
#: Columns that count things: printed as integers (means with one decimal when fractional).
COUNT_COLUMNS = ("episodes", "errors", "steps", "invalid")

#: What each column of the report means (the Markdown legend and the JSON ``columns``).
LEGEND: dict[str, str] = {
    "episodes": "episodes run (one per seed), including those that raised an error",
    "errors": "episodes that raised an exception (listed under Errors); they count as failures in "
    "`success` and are left out of every other mean",
    "return": "mean episode return (REALM envs: progress_weight x completeness + optimality_weight x optimality)",
    "completeness": "mean share of the env's sub-goals passed at the end of the episode (progress: "
    "targets visited, groups served, passengers delivered, jobs completed); 1.0 = every sub-goal passed",
    "success": "share of episodes that reached a complete, feasible plan: terminated (not cut by a step "
    "limit) with every sub-goal passed and, when the env reports it, constraint_satisfaction = 1. "
    "A complete plan worse than the reference is a success with optimality < 1",
    "steps": "mean number of env steps per episode",
    "invalid": "mean number of invalid (rejected) actions per episode",
    "time_s": "mean wall-clock seconds per episode (measured by the runner, never by the env)",
    "planning_quality": "REALM: share of the problem's demands the plan serves",
    "optimality": "REALM: plan quality against the reference (oracle or best known), in [0, 1]; 0 if infeasible",
    "constraint_satisfaction": "REALM: share of the plan's constraints that hold",
    "coordination": "REALM: multi-agent problems, share of agents that contribute",
    "adaptation": "REALM: disruption problems, quality after disruptions against an adaptive oracle",
}

#: Tolerance for "every sub-goal passed" / "every constraint holds" (shares are ratios).
_FULL = 1.0 - 1e-9


class Policy(Protocol):
    """Anything that maps an observation (and info) to an action for ``env.step``."""

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any: ...


#: A policy factory receives the (wrapped) env it will act in.
PolicyFactory = Callable[[gym.Env], Policy]


def episode_success(terminated: bool, completeness: float, metrics: Mapping[str, Any]) -> bool:
    """A complete, feasible plan: the episode terminated (was not truncated) with every
    sub-goal passed, and every constraint holds when the env reports
    ``constraint_satisfaction``. Optimality is not required: that is its own metric."""
    cs = metrics.get("constraint_satisfaction")
    feasible = not isinstance(cs, (int, float)) or isinstance(cs, bool) or cs >= _FULL
    return bool(terminated and completeness >= _FULL and feasible)


@dataclass
class EpisodeResult:
    """One episode's outcome. ``error`` (``"Type: message"``) is set when the episode raised;
    the other fields then hold what was measured before the exception."""

    env_id: str
    env_kwargs: dict[str, Any]
    policy: str
    seed: int
    episode_return: float
    steps: int
    invalid_actions: int
    completeness: float
    terminated: bool
    truncated: bool
    metrics: dict[str, Any] = field(default_factory=dict)
    wall_time_s: float = 0.0
    success: bool = False
    error: str | None = None
    traceback: str | None = None


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
    if column == "time_s":
        return f"{value:.2f}"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


@dataclass
class BenchmarkReport:
    """All episode results, with summaries and writers."""

    results: list[EpisodeResult]

    @property
    def n_errors(self) -> int:
        """Episodes that raised."""
        return sum(r.error is not None for r in self.results)

    def summary(self) -> list[dict[str, Any]]:
        """One row per (env, kwargs, policy): counts, and means over the episodes that ran
        to the end (``None`` when every episode raised); ``success`` is over all episodes."""
        groups: dict[tuple[str, str, str], list[EpisodeResult]] = {}
        for r in self.results:
            key = (r.env_id, _kwargs_key(r.env_kwargs), r.policy)
            groups.setdefault(key, []).append(r)
        rows = []
        for (env_id, kwargs, policy), all_rs in groups.items():
            rs = [r for r in all_rs if r.error is None]
            metric_names = sorted({k for r in rs for k, v in r.metrics.items() if _is_number(v)})
            row: dict[str, Any] = {
                "env": env_id,
                "kwargs": kwargs,
                "policy": policy,
                "episodes": len(all_rs),
                "errors": len(all_rs) - len(rs),
                "return": _mean(r.episode_return for r in rs),
                "completeness": _mean(r.completeness for r in rs),
                "success": statistics.fmean(float(r.success and r.error is None) for r in all_rs),
                "steps": _mean(r.steps for r in rs),
                "invalid": _mean(r.invalid_actions for r in rs),
                "time_s": statistics.fmean(r.wall_time_s for r in all_rs),
            }
            for name in metric_names:
                row[name] = _mean(float(r.metrics[name]) for r in rs if _is_number(r.metrics.get(name)))
            rows.append(row)
        return rows

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
        columns = [c for c in (*RUNNER_COLUMNS, *REALM_METRICS) if c in present]
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
        if legend:
            lines += ["", "**Columns**", ""]
            lines += [f"- `{c}`: {LEGEND[c]}" for c in columns if c in LEGEND]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "errors": self.error_groups(),
            "episodes": [asdict(r) for r in self.results],
            "columns": dict(LEGEND),
        }

    def write(self, directory: str | Path) -> dict[str, Path]:
        """Write ``report.json`` and ``report.md`` into ``directory``; return their paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "report.json", "markdown": out / "report.md"}
        paths["json"].write_text(json.dumps(self.to_json(), indent=2, default=str))
        paths["markdown"].write_text(self.to_markdown())
        return paths

    def plot(self, path: str | Path, metric: str = "return") -> Path:
        """Bar chart of ``metric`` per env and policy (needs the ``viz`` extra)."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on extras
            raise ImportError('plotting needs matplotlib: pip install "crab_gym[viz]"') from exc
        rows = self.summary()
        envs = list(dict.fromkeys(r["env"] for r in rows))
        policies = list(dict.fromkeys(r["policy"] for r in rows))
        width = 0.8 / max(len(policies), 1)
        fig, ax = plt.subplots(figsize=(max(4, 1.5 * len(envs)), 3.2))
        for j, pol in enumerate(policies):
            xs, ys = [], []
            for i, env_id in enumerate(envs):
                vals = [r.get(metric) for r in rows if r["env"] == env_id and r["policy"] == pol]
                vals = [v for v in vals if _is_number(v)]
                if vals:
                    xs.append(i + j * width)
                    ys.append(statistics.fmean(vals))
            ax.bar(xs, ys, width=width, label=pol)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(envs))], envs, rotation=20, ha="right")
        ax.set_ylabel(metric)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
        target = Path(path)
        fig.savefig(target, dpi=120)
        plt.close(fig)
        return target


def _kwargs_key(kwargs: Mapping[str, Any]) -> str:
    """An env's kwargs as the report shows and groups them (canonical JSON)."""
    return json.dumps(kwargs, sort_keys=True, default=str)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Benchmark:
    """Runs policies over env ids (with kwargs) for seeded episodes.

    Args:
        envs: env ids, or ``(env_id, kwargs)`` pairs.
        seeds: one episode per seed, per env and policy.
        max_steps: a step cap per episode (truncation), on top of any registered limit.
    """

    def __init__(
        self,
        envs: Sequence[str | tuple[str, Mapping[str, Any]]],
        seeds: Sequence[int] = (0,),
        max_steps: int = 10_000,
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.envs = [(e, {}) if isinstance(e, str) else (e[0], dict(e[1])) for e in envs]
        self.seeds = list(seeds)
        self.max_steps = max_steps

    def run(
        self,
        policies: Mapping[str, PolicyFactory],
        *,
        progress: bool = True,
    ) -> BenchmarkReport:
        """Run every policy on every env for every seed; return the report.

        An exception in an episode (making the env, building the policy, resetting or
        stepping) is recorded in that episode's result and the run goes on. On
        KeyboardInterrupt the exception is re-raised with ``partial_report`` attached.
        """
        from tqdm.auto import tqdm

        jobs = [(e, k, p, s) for e, k in self.envs for p in policies for s in self.seeds]
        results: list[EpisodeResult] = []
        bar = tqdm(jobs, disable=not progress, desc="episodes")
        try:
            for env_id, kwargs, policy_name, seed in bar:
                results.append(self._guarded_episode(env_id, kwargs, policy_name, policies[policy_name], seed))
                if results[-1].error is not None:
                    bar.set_postfix(errors=sum(r.error is not None for r in results))
        except KeyboardInterrupt as exc:
            exc.partial_report = BenchmarkReport(results)  # type: ignore[attr-defined]
            raise
        finally:
            bar.close()
        return BenchmarkReport(results)

    def _guarded_episode(
        self, env_id: str, kwargs: dict, name: str, factory: PolicyFactory, seed: int
    ) -> EpisodeResult:
        """One episode; any exception becomes the result's ``error``."""
        tally = EpisodeResult(env_id, kwargs, name, seed, 0.0, 0, 0, 0.0, False, False)
        start = time.perf_counter()
        env: gym.Env | None = None
        try:
            env = gym.make(env_id, **kwargs)
            self._episode(env, factory(env), tally)
        except Exception as exc:  # noqa: BLE001 - recorded, and the run goes on
            tally.error = f"{type(exc).__name__}: {exc}"
            tally.traceback = tb.format_exc()
            tally.success = False
        finally:
            if env is not None:
                try:
                    env.close()
                except Exception as exc:  # noqa: BLE001 - a failing close must not lose the episode
                    if tally.error is None:
                        tally.error = f"{type(exc).__name__} while closing the env: {exc}"
                        tally.traceback = tb.format_exc()
                        tally.success = False
            tally.wall_time_s = time.perf_counter() - start
        return tally

    def _episode(self, env: gym.Env, policy: Policy, tally: EpisodeResult) -> None:
        """Play one episode, keeping ``tally`` up to date after every step (so that an
        exception leaves what was measured so far)."""
        obs, info = env.reset(seed=tally.seed)
        if hasattr(policy, "reset"):
            policy.reset(env)
        if hasattr(policy, "seed"):  # a stochastic policy draws its own stream per episode seed
            policy.seed(tally.seed)
        terminated = truncated = False
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(policy(obs, info))
            tally.episode_return += float(reward)
            tally.steps += 1
            tally.invalid_actions += int(info.get("valid", True) is False)
            tally.completeness = float(info.get("completeness", 0.0))
            if tally.steps >= self.max_steps and not terminated:
                truncated = True
        tally.terminated, tally.truncated = bool(terminated), bool(truncated)
        tally.metrics = dict(info.get("metrics", {}) or {})
        tally.success = episode_success(tally.terminated, tally.completeness, tally.metrics)
