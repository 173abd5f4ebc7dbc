"""The reference results as a page (``docs/results.md``) and a figure (``docs/results.png``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.index import problem_specs
from crab_gym.evaluation.unfinished import is_number
from crab_gym.results.table import rows_by_env

#: The columns of a problem's table, when some row has them.
COLUMNS = ("return", "optimality", "success", "planning_quality", "constraint_satisfaction", "coordination",
           "adaptation")


def cell(row: Mapping[str, Any], column: str) -> str:
    """``0.812 [0.78, 0.84]``: the mean and its 95 % interval (``n/a`` where it does not apply)."""
    value = row.get(column)
    if not is_number(value):
        return "n/a"
    ci = (row.get("ci") or {}).get(column)
    if not ci:
        return f"{value:.3f}"
    return f"{value:.3f} [{math.floor(ci[0] * 100 + 1e-9) / 100:.2f}, {math.ceil(ci[1] * 100 - 1e-9) / 100:.2f}]"


def env_table(env_id: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One problem's table: a row per policy."""
    columns = [c for c in COLUMNS if any(is_number(r.get(c)) for r in rows)]
    title = next((f" ({s.title})" for s in problem_specs() if s.env_id == env_id), "")
    split = rows[0].get("split")
    instances = max(int(r.get("instances") or 0) for r in rows)
    lines = [f"### {env_id}{title}", "", f"Split `{split}`, {instances} instances.", "",
             "| policy | track | episodes | " + " | ".join(columns) + " |", "|---|---|---|" + "---|" * len(columns)]
    for row in rows:
        lines.append(f"| {row['policy']} | {row.get('track', 'solver-free')} | {row.get('episodes')} | "
                     + " | ".join(cell(row, c) for c in columns) + " |")
    return [*lines, ""]


def results_markdown(data: Mapping[str, Any], figure: str | None = "results.png") -> str:
    """The whole page: how the table was made and how to make it again, then a table per problem."""
    card = data.get("card") or {}
    versions = ", ".join(f"{k} {v}" for k, v in (card.get("versions") or {}).items())
    wall = data.get("regeneration_wall_s")
    took = f" It took {wall / 60:.1f} minutes with `--workers 2` on a 2-core machine." if wall else ""
    lines = [
        "# Reference results",
        "",
        "Every baseline on every REALM id's `test` split: doing nothing (where an empty plan is a legal move), "
        "random play (seeds 0-4), every registered heuristic, the shipped trained policy (`trained`: a "
        "MaskablePPO model made by `crab-gym train`, the command in `crab_gym/baselines/trained/manifest.json`, "
        "[docs/rl.md](rl.md)) and the oracle (seed 0: they are deterministic on an instance). Each cell is the mean over the split's instances (and seeds) with its 95 % "
        "bootstrap interval over instances and seeds. `track`: may the policy call a solver "
        "([docs/evaluation.md](evaluation.md#evaluation-tracks-may-the-agent-call-a-solver)); compare your "
        "agent with the rows of its track. The splits: `crab-gym list --splits`.",
        "",
        f"Regenerate the table (resumable: run it again after a kill): `{data.get('command')}`.{took}",
        f"Made {card.get('date', '?')} with {versions}. Compare your run with it: "
        "`crab-gym report DIR --compare reference`.",
        "",
    ]
    if figure:
        lines += [f"![optimality per problem and baseline]({figure})", ""]
    for env_id, rows in rows_by_env(data["rows"]).items():
        lines += env_table(env_id, rows)
    return "\n".join(lines)


def results_figure(data: Mapping[str, Any], path: str | Path) -> Path:
    """Mean optimality per problem for do-nothing, random, the best heuristic, the shipped trained
    policy (where there is one) and the oracle."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = rows_by_env(data["rows"])
    envs = list(groups)
    named = ("do_nothing", "random", "trained", "oracle")
    series: dict[str, list[float]] = {"do_nothing": [], "random": [], "best heuristic": [], "trained": [], "oracle": []}
    for env_id in envs:
        by_policy = {r["policy"]: r.get("optimality") for r in groups[env_id]}
        heuristics = [v for p, v in by_policy.items() if p not in named and is_number(v)]
        for name in named:
            series[name].append(by_policy.get(name) if is_number(by_policy.get(name)) else math.nan)
        series["best heuristic"].append(max(heuristics) if heuristics else math.nan)
    if all(math.isnan(v) for v in series["trained"]):
        del series["trained"]
    fig, ax = plt.subplots(figsize=(11, 3.6))
    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series.items()):
        ax.bar([i + k * width for i in range(len(envs))], values, width=width, label=name)
    ax.set_xticks([i + (len(series) - 1) / 2 * width for i in range(len(envs))],
                  [e.removeprefix("Realm-").removesuffix("-v0") for e in envs])
    ax.set_ylabel("optimality (test split)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize="small", ncol=len(series), loc="upper center", bbox_to_anchor=(0.5, 1.15))
    fig.tight_layout()
    target = Path(path)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
