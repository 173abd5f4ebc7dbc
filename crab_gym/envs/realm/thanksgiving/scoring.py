"""P6/P9 scores of an afternoon: optimality, coordination and adaptation measure the cost a
plan avoids, not its whole cost.

Much of an afternoon's cost is the cooking no plan avoids (a turkey takes its three hours), so
``best / cost`` scores even the worst plan that keeps the deadline about 0.8. Instead every
score is :func:`~crab_gym.envs.realm.common.references.normalised_optimality`:
``(baseline - cost) / (baseline - best)`` clipped to [0, 1], 0 for a plan that breaks a rule:

* **optimality** (:func:`optimality_baseline`): ``best`` is the reference; ``baseline`` is the
  latest acceptable dinner, ready at the deadline (cost ``deadline - start_time``,
  :func:`latest_acceptable`), so a plan scores the share of the time before the deadline that
  it saves, against the best plan known; a late plan scores 0. When even the best known plan
  is late (no plan can keep the deadline), the baseline is the one-at-a-time afternoon
  (``solo``, :mod:`.coordination`), so late plans are still ranked by their cost, lateness
  included.
* **coordination** (:func:`coordination_baseline`): the same with the baseline capped at the
  one-at-a-time afternoon's proven lower bound, so that taking turns scores 0 as well as any
  plan optimality scores 0; ``None`` (does not apply) when taking turns loses nothing.
* **adaptation** (P9): the optimality rule with ``best`` the best continuation from the
  episode's own state at its first announcement.
"""

from __future__ import annotations

from crab_gym.envs.realm.common.coordination import savings_share
from crab_gym.envs.realm.common.references import NOT_APPLICABLE, normalised_optimality
from crab_gym.envs.realm.thanksgiving.model import ThanksgivingInstance


def latest_acceptable(inst: ThanksgivingInstance) -> float:
    """The cost of dinner ready exactly at the deadline (no driving counted): ``deadline -
    start_time`` minutes."""
    return float(inst.deadline - inst.start_time)


def optimality_baseline(inst: ThanksgivingInstance, best: float | None, solo: float | None) -> float:
    """The cost that scores 0: dinner at the deadline when ``best`` is earlier; otherwise (no
    plan known keeps the deadline) the one-at-a-time afternoon's cost ``solo``."""
    on_time = latest_acceptable(inst)
    if best is None or best < on_time or solo is None:
        return on_time
    return float(solo)


def coordination_baseline(inst: ThanksgivingInstance, best: float | None, solo: float | None) -> float:
    """The optimality baseline, capped at ``solo`` (taking turns scores 0 too)."""
    base = optimality_baseline(inst, best, solo)
    return base if solo is None else min(base, float(solo))


def optimality(inst: ThanksgivingInstance, best: float | None, cost: float | None, feasible: bool,
               solo: float | None) -> float:
    """The share of the avoidable cost (baseline -> ``best``) that the plan avoids."""
    return normalised_optimality(best, cost, feasible, optimality_baseline(inst, best, solo))


def coordination(inst: ThanksgivingInstance, best: float | None, cost: float | None, feasible: bool,
                 solo: float | None) -> float | None:
    """The share of the gain of working together (baseline -> ``best``) that the plan
    realises; 0 for a plan that breaks a rule; ``None`` when taking turns loses nothing."""
    if not feasible or cost is None:
        return 0.0
    base = coordination_baseline(inst, best, solo)
    if best is not None and base <= best:
        return NOT_APPLICABLE
    return savings_share(cost, feasible, base, best)
