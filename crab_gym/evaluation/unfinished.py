"""How an episode the env did not end counts in the report's means: the one rule.

An episode is *unfinished* when the env did not end it and the infrastructure is not to
blame: it was cut by a step limit (``--max-steps``, an agent's own limit), a time limit, or a
client that stopped it (``truncated``), or the policy's own code raised (an agent failure,
:mod:`crab_gym.evaluation.outcome`). It has no plan, and doing nothing scores 0 (the scoring
contract), so in the means of the REALM score metrics it counts **0 on every metric that
applies to it**, and is left out only of a metric that does not apply:

* a metric its record reports as ``None`` (the env said: not applicable) is left out;
* a metric its record reports as a number counts 0, whatever partial value an env gave;
* a metric its record does not mention counts 0 when some finished (terminated) episode of
  the same env and kwargs reports it as a number, and is left out otherwise.

"The same env and kwargs" is the same instance: a split's episodes carry their instance among
the kwargs (``instance=``), and what applies is decided per instance, never per split: an
instance where one actor has nothing to share reports coordination n/a while another of the
same split measures it, and an episode cut on the first must not count 0 because of the second.

The runner writes what it knows into the record of an unfinished episode of a REALM env
(:func:`no_plan_metrics`): ``planning_quality``, ``optimality`` and
``constraint_satisfaction`` 0, and ``adaptation`` 0 when a disruption struck before the cut
(``info["disruptions"]`` reported one), ``None`` when none did. ``coordination`` depends on
the instance (whether working together gains anything), so it is decided by the last rule,
as is everything in a record written before this rule (whose metrics are empty), so that old
``episodes.jsonl`` files report under the same rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from crab_gym.evaluation.outcome import is_infra_failure

#: The REALM score metrics (resource usage, the sixth, is measured by the runner).
SCORE_METRICS = ("planning_quality", "optimality", "constraint_satisfaction", "coordination", "adaptation")
#: The score metrics every REALM env measures on every episode: 0 for an episode with no plan.
PLAN_METRICS = ("planning_quality", "optimality", "constraint_satisfaction")


class _Record(Protocol):
    env_id: str
    env_kwargs: Mapping[str, Any]
    terminated: bool
    error: str | None
    error_kind: str | None
    success: bool
    metrics: Mapping[str, Any]


def is_number(value: Any) -> bool:
    """A metric value that enters a mean (``None``, a bool or a string does not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_unfinished(result: _Record) -> bool:
    """The env did not end it (cut by a step or time limit, or the policy raised), and the
    infrastructure is not to blame: no plan, in every mean."""
    return not is_infra_failure(result) and not result.terminated


def no_plan_metrics(metrics: Mapping[str, Any], disruptions_fired: int | None) -> dict[str, Any]:
    """The record of an unfinished episode of a REALM env: the env's last metrics (usually
    none, as envs report them at the end), with every score metric it gave as a number set to
    0, the :data:`PLAN_METRICS` 0, and ``adaptation`` 0 if a disruption struck before the cut
    (``disruptions_fired`` > 0), ``None`` if none did (``disruptions_fired`` 0), left out if
    unknown (``None``: the env reports no ``disruptions`` in its info)."""
    out = {k: (0.0 if k in SCORE_METRICS and is_number(v) else v) for k, v in metrics.items()}
    for name in PLAN_METRICS:
        out.setdefault(name, 0.0)
    if "adaptation" not in out and disruptions_fired is not None:
        out["adaptation"] = 0.0 if disruptions_fired > 0 else None
    return out


def measured_metrics(results: Iterable[_Record], group_key: Any) -> dict[Any, set[str]]:
    """Per ``group_key(result)`` (env and kwargs: the instance), the score metrics some finished
    (terminated, error-free) episode reports as a number: what applies to that env."""
    measured: dict[Any, set[str]] = {}
    for r in results:
        names = measured.setdefault(group_key(r), set())
        if r.error is None and r.terminated:
            names.update(m for m in SCORE_METRICS if is_number(r.metrics.get(m)))
    return measured


def scored_value(result: _Record, name: str, measured: set[str]) -> float | None:
    """``result``'s value of metric ``name`` in the means: its own number for a finished
    episode; for an unfinished one 0 where the metric applies (see the module docstring);
    None (left out) where it does not apply or was not measured."""
    value = result.metrics.get(name)
    if not is_unfinished(result) or name not in SCORE_METRICS:
        return float(value) if is_number(value) else None
    if name in result.metrics:
        return 0.0 if is_number(value) else None
    return 0.0 if name in measured else None
