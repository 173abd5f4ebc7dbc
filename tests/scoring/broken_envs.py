"""REALM envs built to break one promise of the scoring contract each, so that the tests can
show :func:`~crab_gym.checks.check_scoring` catches it (a check that cannot fail proves
nothing). Each subclasses the real P2 env and changes one score."""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.references import optimality_ratio
from crab_gym.envs.realm.group_tours.env import GroupToursEnv


class AlwaysOptimalEnv(GroupToursEnv):
    """Optimality 1 for any finished episode, doing nothing included."""

    def _optimality(self) -> float:
        return 1.0


class InfeasibleCoordinatesEnv(GroupToursEnv):
    """Coordination 0.9 whatever the plan, infeasible ones included."""

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        metrics, solution = super()._final_info()
        return {**metrics, "coordination": 0.9}, solution


class InvertedOptimalityEnv(GroupToursEnv):
    """Optimality that falls as the plan gets cheaper (cost / reference, clipped)."""

    def _optimality(self) -> float:
        cost, ref = self._agent_cost(), self.reference.measure
        if not self._plan_feasible() or cost is None or not ref:
            return 0.0
        return min(1.0, 0.5 * cost / ref) if cost else 0.0


class SplitDependentEnv(GroupToursEnv):
    """Planning quality that depends on how the reference split the work (the share of groups
    led by the guide the reference gave them)."""

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        metrics, solution = super()._final_info()
        ref = self.reference.plan["assignments"] if self.reference.plan else {}
        owner = {t["group"]: gid for gid, tours in ref.items() for t in tours}
        mine = {t["group"]: gid for gid, tours in solution["assignments"].items() for t in tours}
        same = sum(owner.get(g) == gid for g, gid in mine.items())
        return {**metrics, "planning_quality": same / max(1, len(owner))}, solution


def lenient_ratio(reference: float | None, cost: float | None, feasible: bool) -> float:
    """``optimality_ratio`` that ignores feasibility (for :class:`InfeasibleScoresEnv`)."""
    return optimality_ratio(reference, cost, True)


class InfeasibleScoresEnv(GroupToursEnv):
    """An infeasible plan keeps its cost ratio as optimality."""

    def _optimality(self) -> float:
        return lenient_ratio(self.reference.measure, self._agent_cost(), True)


class LenientSimEnv(GroupToursEnv):
    """A simulator that lets a plan through which the family's independent checker refuses
    (every finished plan counts as feasible), and costs plans a minute cheaper than it."""

    def _plan_feasible(self) -> bool:
        return True

    def _agent_cost(self) -> float | None:
        cost = super()._agent_cost()
        return None if cost is None else cost - 1
