"""The coordination score shared by the problems that measure it against a solo baseline.

Each family builds its own no-coordination baseline plan (``coordination.py`` in the family);
the score of a plan against it is the same arithmetic everywhere, written once here.
"""

from __future__ import annotations

import math


def savings_share(cost: float | None, feasible: bool, solo: float, reference: float | None) -> float:
    """``(solo - cost) / (solo - reference)`` clipped to [0, 1]: the share of the gain from
    working together (solo baseline -> reference) that the plan realises; 0 for an infeasible
    plan. With nothing to gain (``solo <= reference``) a feasible plan scores 1 if it costs no
    more than the reference, else 0; without a reference value, 1 if it costs no more than
    the baseline, else 0."""
    if not feasible or cost is None or not math.isfinite(cost):
        return 0.0
    if reference is None:
        return 1.0 if cost <= solo else 0.0
    gain = solo - float(reference)
    if gain <= 0:
        return 1.0 if cost <= reference else 0.0
    return max(0.0, min(1.0, (solo - cost) / gain))
