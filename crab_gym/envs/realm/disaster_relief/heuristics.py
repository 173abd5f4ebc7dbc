"""A greedy P7 policy: each free vehicle takes the legal ``send`` that earns most shortfall
points (a unit on time is worth ``2 w``, a late one ``w``), shorter trips first among equals;
a vehicle with no legal send waits.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from crab_gym.envs.realm.common.policy_fit import EnvFit, FittedPolicy
from crab_gym.envs.realm.disaster_relief.sim import ReliefSim

#: The env the greedy policy reads (its ``sim`` and ``instance``).
FIT = EnvFit("GreedyReliefPolicy", "crab_gym.envs.realm.disaster_relief.env.DisasterReliefEnv", ("Realm-P7-v0",))


def best_send(sim: ReliefSim, v: int) -> tuple[int, str] | None:
    """The legal ``(region, resource)`` for vehicle ``v`` that earns most points now."""
    inst, best, key = sim.inst, None, None
    for r, k in sim.legal_sends(v):
        reg, leg = inst.regions[r], inst.one_way[v][r]
        worth = (2 if sim.now + leg <= reg.deadline else 1) * reg.weight * sim.send_load(v, r, k)
        cand = (worth, -leg, -r)
        if key is None or cand > key:
            best, key = (r, k), cand
    return best


def greedy_action(env: gym.Env) -> dict[str, Any]:
    """The greedy tool call for the first vehicle free now (a P7 env, wrapped or not)."""
    base = FIT.check(env)
    sim, inst = base.sim, base.instance
    v = sim.acting()[0]
    pick = best_send(sim, v)
    if pick is None:
        return {"name": "wait", "arguments": {"vehicle": inst.vehicle_ids[v]}}
    r, k = pick
    return {"name": "send", "arguments": {"vehicle": inst.vehicle_ids[v], "region": inst.region_ids[r], "resource": k}}


class GreedyReliefPolicy(FittedPolicy):
    """:func:`greedy_action` as a ``policy(obs, info)``."""

    name = "p7_greedy"
    fit = FIT

    def __call__(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        return greedy_action(self.env)
