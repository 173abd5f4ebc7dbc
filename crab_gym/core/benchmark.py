"""Benchmark: run a policy over envs/tasks and report returns, sub-goals and REALM metrics.

The runner (not the env) measures wall-clock time, so envs stay deterministic and their
``info`` comparable across runs. Reports are written as JSON (for analysis) and a Markdown
table (for people); a plot is available with the ``viz`` extra.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym


#: Columns the runner measures, then the REALM metrics, in table order.
RUNNER_COLUMNS = ("env", "policy", "episodes", "return", "completeness", "success", "steps", "invalid", "time_s")
REALM_METRICS = ("planning_quality", "optimality", "constraint_satisfaction", "coordination", "adaptation")


class Policy(Protocol):
    """Anything that maps an observation (and info) to an action for ``env.step``."""

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any: ...


#: A policy factory receives the (wrapped) env it will act in.
PolicyFactory = Callable[[gym.Env], Policy]


@dataclass
class EpisodeResult:
    """One episode's outcome."""

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


@dataclass
class BenchmarkReport:
    """All episode results, with summaries and writers."""

    results: list[EpisodeResult]

    def summary(self) -> list[dict[str, Any]]:
        """One row per (env, kwargs, policy): means over episodes."""
        groups: dict[tuple[str, str, str], list[EpisodeResult]] = {}
        for r in self.results:
            key = (r.env_id, json.dumps(r.env_kwargs, sort_keys=True, default=str), r.policy)
            groups.setdefault(key, []).append(r)
        rows = []
        for (env_id, kwargs, policy), rs in groups.items():
            metric_names = sorted({k for r in rs for k, v in r.metrics.items() if isinstance(v, (int, float))})
            row: dict[str, Any] = {
                "env": env_id,
                "kwargs": kwargs,
                "policy": policy,
                "episodes": len(rs),
                "return": statistics.fmean(r.episode_return for r in rs),
                "completeness": statistics.fmean(r.completeness for r in rs),
                "success": statistics.fmean(float(r.terminated and r.completeness >= 1.0) for r in rs),
                "steps": statistics.fmean(r.steps for r in rs),
                "invalid": statistics.fmean(r.invalid_actions for r in rs),
                "time_s": statistics.fmean(r.wall_time_s for r in rs),
            }
            for name in metric_names:
                vals = [float(r.metrics[name]) for r in rs if isinstance(r.metrics.get(name), (int, float))]
                row[name] = statistics.fmean(vals) if vals else float("nan")
            rows.append(row)
        return rows

    def to_markdown(self) -> str:
        """A Markdown table of :meth:`summary`: the runner's columns and the REALM metrics
        (problem-specific metrics stay in the JSON report)."""
        rows = self.summary()
        if not rows:
            return "(no episodes)\n"
        present = {k for row in rows for k in row}
        columns = [c for c in (*RUNNER_COLUMNS, *REALM_METRICS) if c in present]
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for row in rows:
            cells = []
            for c in columns:
                v = row.get(c, "")
                cells.append(f"{v:.3f}" if isinstance(v, float) else str(v))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary(), "episodes": [asdict(r) for r in self.results]}

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
                vals = [r.get(metric, float("nan")) for r in rows if r["env"] == env_id and r["policy"] == pol]
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
        self.envs = [(e, {}) if isinstance(e, str) else (e[0], dict(e[1])) for e in envs]
        self.seeds = list(seeds)
        self.max_steps = max_steps

    def run(
        self,
        policies: Mapping[str, PolicyFactory],
        *,
        progress: bool = True,
    ) -> BenchmarkReport:
        """Run every policy on every env for every seed; return the report."""
        from tqdm.auto import tqdm

        jobs = [(e, k, p, s) for e, k in self.envs for p in policies for s in self.seeds]
        results: list[EpisodeResult] = []
        for env_id, kwargs, policy_name, seed in tqdm(jobs, disable=not progress, desc="episodes"):
            env = gym.make(env_id, **kwargs)
            try:
                policy = policies[policy_name](env)
                results.append(self._episode(env, env_id, kwargs, policy_name, policy, seed))
            finally:
                env.close()
        return BenchmarkReport(results)

    def _episode(
        self, env: gym.Env, env_id: str, kwargs: dict, name: str, policy: Policy, seed: int
    ) -> EpisodeResult:
        start = time.perf_counter()
        obs, info = env.reset(seed=seed)
        if hasattr(policy, "reset"):
            policy.reset(env)
        total, steps, invalid = 0.0, 0, 0
        terminated = truncated = False
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(policy(obs, info))
            total += float(reward)
            steps += 1
            invalid += int(info.get("valid", True) is False)
            if steps >= self.max_steps and not terminated:
                truncated = True
        return EpisodeResult(
            env_id=env_id,
            env_kwargs=kwargs,
            policy=name,
            seed=seed,
            episode_return=total,
            steps=steps,
            invalid_actions=invalid,
            completeness=float(info.get("completeness", 0.0)),
            terminated=bool(terminated),
            truncated=bool(truncated),
            metrics=dict(info.get("metrics", {}) or {}),
            wall_time_s=time.perf_counter() - start,
        )
