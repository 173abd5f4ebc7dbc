"""The verdict of a family's independent checker on one plan.

Every checker (written apart from its env's state, so the two can be compared in the tests)
answers the same questions: is the plan feasible, what does it cost, which declared
constraints hold, and the REALM metrics that follow. A family subclasses :class:`PlanCheck`
to add what it measures besides (a schedule, waiting minutes, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class PlanCheck:
    """Attributes:
    feasible: every hard declared constraint holds. A family may also declare soft
        constraints (P10's ``delivery``: every GPU delivered): they count in
        ``constraint_satisfaction`` and in success, their breach is priced in the cost, and
        they do not make a plan infeasible.
    cost: the plan's cost in the problem's units (what the reference value is compared with).
    constraints: each declared constraint by name, and whether it holds.
    metrics: the REALM metrics of the plan.
    """

    feasible: bool
    cost: float
    constraints: dict[str, bool]
    metrics: dict[str, Any]

    @property
    def violations(self) -> list[str]:
        """The names of the declared constraints that do not hold."""
        return [name for name, ok in self.constraints.items() if not ok]
