"""Tiny seeded P10 instances for exhaustive checks (a few units, four to six days; some let
GPUs be packaged late, some have a soft component deadline)."""

from __future__ import annotations

import numpy as np

from crab_gym.envs.realm.supply_chain.model import Breakdown, Component, Facility, P10Instance, Shortage, Supplier


def tiny_instance(seed: int) -> P10Instance:
    """A tiny instance: one or two components, one or two suppliers (never two of both),
    at most three GPUs, random capacities, prices, budget and disruptions."""
    rng = np.random.default_rng(seed)
    C = int(rng.integers(1, 3))
    S = 1 if C == 2 else int(rng.integers(1, 3))
    demand = int(rng.integers(1, 5 - C))
    due = int(rng.integers(3, 5))
    names = ["gpu_chips", "memory"][:C]
    comps = [Component(name=n, bom=int(rng.integers(1, 3)) if c else 1, price=int(rng.integers(5, 40)),
                       holding=int(rng.integers(0, 3)), stock=int(rng.integers(0, 2)),
                       deadline=int(rng.integers(1, due + 1)) if rng.random() < 0.3 else None)
             for c, n in enumerate(names)]
    # lateness, drawn from a generator of its own so that the draws above stay as they were
    late = np.random.default_rng([seed, 1])
    if late.random() < 0.4:  # a soft deadline few orders can meet
        comps[0] = comps[0].model_copy(update={"deadline": int(late.integers(0, 2)), "late_penalty": int(late.integers(1, 10))})
    horizon = due + int(late.integers(0, 2))
    sups = [Supplier(supplier_id=f"supplier{s + 1}", lead_time=int(rng.integers(0, 2)),
                     cost_multiplier=float(rng.choice([1.0, 1.2, 1.5])),
                     capacity={n: int(rng.integers(0, 4)) for n in names}) for s in range(S)]
    facs = [Facility(facility_id=f, capacity=int(rng.integers(1, 3)), cost_per_unit=int(rng.integers(1, 20)))
            for f in ("assembly", "testing", "packaging")]
    disruptions = []
    if rng.random() < 0.6:
        disruptions.append(Shortage(component=names[0], shortage=0.5, start=int(rng.integers(0, 2)),
                                    supplier=None if rng.random() < 0.5 else "supplier1"))
    if rng.random() < 0.6:
        disruptions.append(Breakdown(facility=str(rng.choice(["assembly", "testing", "packaging"])),
                                     start=int(rng.integers(0, due)), duration=1))
    full = sum(c.price * c.bom * demand * 2 for c in comps) + sum(f.cost_per_unit for f in facs) * demand
    return P10Instance(name=f"tiny_{seed}", demand=demand, due_day=due, horizon=horizon,
                       lateness_penalty=int(late.integers(0, 30)), budget=int(full * rng.uniform(0.3, 1.0)),
                       shortfall_penalty=int(rng.integers(20, 300)), wip_holding=int(rng.integers(0, 3)),
                       components=comps, suppliers=sups, facilities=facs, disruptions=disruptions)
