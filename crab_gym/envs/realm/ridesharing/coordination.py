"""The P3/P4 coordination metric: how much of the gain from working together a plan realises.

The vehicles are the agents. Without teamwork one vehicle does all the work while the others
idle; the baseline is the **best one-vehicle plan** known (``solo``: for each vehicle, the
oracle restricted to that vehicle and a local search on it; the cheapest vehicle wins; see
:func:`~crab_gym.envs.realm.ridesharing.best_known.solo_plan`), priced like the plan itself:
travel minutes plus ``unserved_penalty`` per request not served, facing the episode's
disruptions in P4 (none in P3). The best joint plan known is the reference (the optimality
yardstick). With :func:`~crab_gym.envs.realm.common.coordination.savings_share`::

    coordination = (solo - cost) / (solo - reference)     clipped to [0, 1]

so any one-vehicle plan scores 0 (it costs at least ``solo``), the best known plan 1, and a
plan in between the share of the team's gain it realises. An infeasible plan scores 0.
When one vehicle alone is as good as the best team plan known (``solo <= reference``) there
is nothing to coordinate: the metric does not apply and is ``None``
(:data:`~crab_gym.envs.realm.common.references.NOT_APPLICABLE`), for every plan.
"""

from __future__ import annotations

from crab_gym.envs.realm.common.coordination import savings_share
from crab_gym.envs.realm.common.references import NOT_APPLICABLE


def ride_coordination(cost: float | None, feasible: bool, solo: float | None, reference: float | None) -> float | None:
    """The coordination score of a plan costing ``cost`` (``feasible``: the env's or the
    checker's verdict), against the best one-vehicle plan ``solo`` and the best known
    ``reference``; None when there is nothing to coordinate (see the module doc)."""
    if solo is None or reference is None or float(solo) - float(reference) <= 0:
        return NOT_APPLICABLE
    return savings_share(cost, feasible, float(solo), float(reference))
