"""A greedy P10 policy: each day, push units through the stages as far as they go, order
what the demand still needs (the scarcest component first, counted in whole GPUs) from the
supplier with the cheapest landed cost (price, plus the lateness a unit arriving then costs:
after a soft deadline, or too late for its GPU to be packaged by the due day), then end the
day.

It sees only what the agent sees (the mask's limits), so a shortage simply moves its orders
to the next cheapest supplier and a breakdown makes units wait. It keeps enough budget to
produce every GPU still to come, but ignores holding costs and buys early, which is where
the oracle beats it.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.policy_fit import EnvFit
from crab_gym.envs.realm.supply_chain.env import LEVELS
from crab_gym.envs.realm.supply_chain.model import STAGES

#: Stages in the order the greedy policy runs them each day (downstream first, so that a
#: unit does not move two stages in one day, which the model forbids anyway).
_STAGE_ORDER = (2, 1, 0)

#: The env :func:`greedy_action` reads (checked once per env class).
FIT = EnvFit(
    "supply_chain.heuristics.greedy_action",
    "crab_gym.envs.realm.supply_chain.env.SupplyChainEnv",
    ("Realm-P10-v0",),
)


def _largest_level(levels: tuple[int, ...], most: int) -> int | None:
    fitting = [q for q in levels if q <= most]
    return max(fitting) if fitting else None


def _landed(inst: Any, day: int, s: int, c: int) -> float:
    """What a unit of component ``c`` ordered from supplier ``s`` today costs in the end: its
    price, its own lateness, and its share of the lateness of the GPU it goes into (packaged
    two days after it arrives at the earliest)."""
    eta = day + inst.suppliers[s].lead_time
    gpu = inst.packing_lateness(eta + len(STAGES) - 1) / inst.components[c].bom
    return inst.prices[s][c] + inst.arrival_lateness(c, eta) + gpu


def greedy_action(env: Any) -> dict[str, Any]:
    """The greedy policy's next action in ``env`` (a Realm-P10-v0 env, possibly wrapped)."""
    base = FIT.check(env)
    sim, inst = base.sim, base.instance
    for k in _STAGE_ORDER:
        q = _largest_level(LEVELS, sim.produce_useful(k)[0])
        if q is not None:
            return {"name": "produce", "arguments": {"facility": STAGES[k], "quantity": q}}
    # keep enough budget to run every GPU still to come through the stages
    reserve = sum((inst.demand - sim.through(k)) * f.cost_per_unit for k, f in enumerate(inst.facilities))
    free = sim.budget_left() - reserve
    coming = [0] * len(inst.components)
    for _, c, q in sim.in_transit():
        coming[c] += q
    kits = [(comp.bom * sim.assembled + sim.on_hand[c] + coming[c]) // comp.bom for c, comp in enumerate(inst.components)]
    for c in sorted(range(len(inst.components)), key=lambda c: (kits[c], c)):  # the scarcest first
        comp = inst.components[c]
        by_price = sorted(range(len(inst.suppliers)), key=lambda s: (_landed(inst, sim.day, s, c), s))
        for s in by_price:
            most = sim.order_useful(c, s)[0]
            price = inst.prices[s][c]
            if price > 0:
                most = min(most, max(0, free) // price)
            q = _largest_level(LEVELS, most)
            if q is not None:
                return {"name": "order", "arguments": {"component": comp.name, "supplier": inst.supplier_ids[s],
                                                       "quantity": q}}
    return {"name": "next_day", "arguments": {}}
