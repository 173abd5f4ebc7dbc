"""J2 envs that each break one promise the scoring probes guard (issue 36), so that the tests
can show :func:`~crab_gym.checks.scoring_probes.check_adversarial` catches it."""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.jobshop.variants.checker import check
from crab_gym.envs.realm.jobshop.variants.env_disruptions import DisruptedShopEnv
from crab_gym.envs.realm.jobshop.variants.heuristics import LPT
from crab_gym.envs.realm.jobshop.variants.oracle import empty_state, greedy_plan
from crab_gym.envs.realm.jobshop.variants.sim import ShopSim


class _AgentStateSim(ShopSim):
    """The state before issue 36: the yardstick's state is the agent's own at the strike,
    every placed operation kept (a held-back job then leaves it nothing to re-plan)."""

    def rolled_back(self, t: int) -> ShopSim:
        return self.copy()


class AgentStateYardstickEnv(DisruptedShopEnv):
    """J2 with the pre-issue-36 yardstick state."""

    def _use_instance(self, inst: Any) -> None:
        super()._use_instance(inst)
        sim = _AgentStateSim(inst)
        sim.keep_first_strike, sim.track_clock = self.sim.keep_first_strike, self.sim.track_clock
        self.sim = sim


class RuleOnlyYardstickEnv(DisruptedShopEnv):
    """J2 whose yardstick is one weak rule's continuation (LPT) from the strike."""

    def _resolve_adaptation(self) -> float:
        sim = self.sim.first_strike_sim.copy()
        while not sim.complete:
            sim.dispatch(LPT.select({"done": sim.done, "processing_time": self._obs_proc,
                                     "lower_bound": sim.lower_bound, "action_mask": sim.mask}))
        return float(sim.makespan)


class GreedyReferenceEnv(DisruptedShopEnv):
    """J2 whose reference is the greedy plan (with hindsight), which CP-SAT beats."""

    def _solve_reference(self) -> Reference:
        plan = greedy_plan(self.instance, empty_state(self.instance, hindsight=True))
        cost = check(self.instance, {"sequence": plan}).cost
        return Reference(value=float(cost), status="FEASIBLE", source="solved", plan={"sequence": plan},
                         fingerprint=self.instance.fingerprint())
