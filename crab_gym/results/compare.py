"""``crab-gym report DIR --compare reference``: a run beside the shipped reference rows.

Your policy and a reference baseline are compared on the instances both played (the same
split), **paired by instance**: per instance, your mean over seeds minus the baseline's; the
difference's mean gets a 95 % bootstrap interval over those instances (the report's own
bootstrap, :mod:`crab_gym.evaluation.stats`). An interval that excludes 0 says the difference is not
the luck of which instances the split holds.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.outcome import is_infra_failure
from crab_gym.evaluation.report_rows import applies_key, episode_values
from crab_gym.evaluation.stats import bootstrap_intervals, draw
from crab_gym.evaluation.unfinished import measured_metrics
from crab_gym.results.table import episode_from_compact

#: The means compared (when both sides have them).
COMPARED = ("return", "optimality", "success", "adaptation", "coordination")


def per_instance(results: Sequence[EpisodeResult], metric: str) -> dict[str, float]:
    """Each instance's mean of ``metric`` over its seeds (infrastructure failures left out),
    each episode valued as the report values it (:func:`~crab_gym.evaluation.report_rows.episode_values`)."""
    kept = [r for r in results if not is_infra_failure(r) and r.instance is not None]
    measured = measured_metrics(kept, applies_key)
    values = episode_values(kept, [measured[applies_key(r)] for r in kept]).get(metric, [])
    by_instance: dict[str, list[float]] = {}
    for r, value in zip(kept, values):
        if value is not None:
            by_instance.setdefault(r.instance, []).append(value)
    return {name: statistics.fmean(v) for name, v in by_instance.items()}


def paired_difference(mine: Mapping[str, float], theirs: Mapping[str, float]) -> dict[str, Any] | None:
    """Mean of ``mine - theirs`` over the instances both have, with its bootstrap interval."""
    shared = sorted(set(mine) & set(theirs))
    if not shared:
        return None
    diffs = np.array([[[mine[n] - theirs[n]] for n in shared]])
    (ci,) = bootstrap_intervals(diffs, draw(tuple([1] * len(shared))))
    return {"instances": len(shared), "mine": statistics.fmean(mine[n] for n in shared),
            "theirs": statistics.fmean(theirs[n] for n in shared), "difference": float(diffs.mean()),
            "ci": list(ci) if ci else None}


def compare(results: Sequence[EpisodeResult], reference: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per (env, your policy, reference policy, metric) with paired instances."""
    shipped = [episode_from_compact(e) for e in reference["episodes"]]
    by_env: dict[str, dict[str, list[EpisodeResult]]] = {}
    for r in shipped:
        by_env.setdefault(r.env_id, {}).setdefault(r.policy, []).append(r)
    mine: dict[tuple[str, str], list[EpisodeResult]] = {}
    for r in results:
        mine.setdefault((r.env_id, r.policy), []).append(r)
    out = []
    for (env_id, policy), episodes in mine.items():
        for theirs_name, theirs in by_env.get(env_id, {}).items():
            for metric in COMPARED:
                found = paired_difference(per_instance(episodes, metric), per_instance(theirs, metric))
                if found is not None:
                    out.append({"env": env_id, "policy": policy, "reference": theirs_name, "metric": metric, **found})
    return out


def compare_markdown(rows: Sequence[Mapping[str, Any]], split: str) -> list[str]:
    """The comparison as a Markdown section (empty rows: say why there is nothing to compare)."""
    head = ["**Compared with the reference results**", ""]
    if not rows:
        return [*head, f"No instance of this run is in the reference results (the `{split}` split of each id): "
                "run with `--split test` to compare.", ""]
    lines = [*head, "Paired by instance: yours minus the reference's mean over the instances both played, with a "
             "95 % bootstrap interval over those instances (an interval without 0: a real difference).", "",
             "| env | policy | vs | metric | instances | yours | reference | difference |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        ci = row.get("ci")
        diff = f"{row['difference']:+.3f}" + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "")
        lines.append(f"| {row['env']} | {row['policy']} | {row['reference']} | {row['metric']} | {row['instances']} | "
                     f"{row['mine']:.3f} | {row['theirs']:.3f} | {diff} |")
    return [*lines, ""]


__all__ = ["COMPARED", "compare", "compare_markdown", "paired_difference", "per_instance"]
