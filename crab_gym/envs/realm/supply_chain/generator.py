"""The seeded P10 generator: supply chains of three size classes whose disruptions bite.

Upstream P10 files have no demand, prices or bill of materials, so the generator defines
them. The cheapest supplier (``asia``) has the longest lead time and cannot cover the demand
alone; the others are quicker and dearer. A shortage then cuts the main component (the
first one, ``gpu_chips``) at the cheapest supplier, and assembly breaks down for a day or
more in mid-plan, so a plan made without them must change. Capacities leave slack over what
the demand needs even under both disruptions, so every instance can deliver on time
(``build.py`` checks that each shipped reference does).

Every instance lets late GPUs be packaged after the due day, until a ``horizon`` half the
plan's length later, at a ``lateness_penalty`` per GPU per day (a twentieth of a GPU's
dearest cost, well above what holding one costs a day); a GPU never packaged costs
``SHORTFALL_FACTOR`` (20) times the most one GPU can add to a plan's cost
(:attr:`~.model.P10Instance.gpu_cost_bound`), so completing a GPU always pays and doing
nothing scores at most 0.05. The ``late`` size class has upstream's shape where no supplier can deliver
the main component (``gpu_chips``) by its deadline: the deadline is soft (a twentieth of the
chip's price per unit per day late), every supplier's lead time overshoots it, and the
cheapest supplier is so slow that the GPUs its chips go into are late too.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from crab_gym.envs.realm.supply_chain.model import (
    STAGES,
    Breakdown,
    Component,
    Facility,
    P10Instance,
    Shortage,
    Supplier,
    with_derived_penalty,
)

Size = Literal["small", "medium", "large", "late"]

#: Per size class: components, suppliers, planning days, GPUs demanded (low, high).
SIZES: dict[str, dict[str, tuple[int, int]]] = {
    "small": {"components": (2, 2), "suppliers": (2, 2), "days": (7, 8), "demand": (8, 16)},
    "medium": {"components": (3, 4), "suppliers": (3, 3), "days": (10, 12), "demand": (30, 60)},
    "large": {"components": (5, 6), "suppliers": (4, 4), "days": (14, 16), "demand": (100, 200)},
    "late": {"components": (3, 4), "suppliers": (3, 3), "days": (10, 12), "demand": (30, 60)},
}
#: The lateness penalty per GPU per day late, as a share of a GPU's dearest cost.
LATENESS_SHARE = 0.05

#: name, units per GPU (low, high), base price (low, high); the first is the main component.
COMPONENTS = (
    ("gpu_chips", (1, 1), (180, 320)),
    ("memory", (2, 4), (20, 50)),
    ("cooling", (1, 1), (15, 40)),
    ("power_supply", (1, 1), (25, 60)),
    ("pcb", (1, 1), (30, 70)),
    ("fans", (1, 2), (5, 12)),
    ("vrm", (1, 3), (8, 20)),
    ("bracket", (1, 1), (2, 6)),
)
#: region and price multiplier, cheapest first (the cheapest is the slowest).
REGIONS = (("asia", 1.0), ("europe", 1.2), ("americas", 1.35), ("oceania", 1.1))
#: Production cost per unit of each stage (low, high).
STAGE_COSTS = ((80, 120), (40, 60), (15, 30))


def _draw(rng: np.random.Generator, lo_hi: tuple[int, int]) -> int:
    return int(rng.integers(lo_hi[0], lo_hi[1] + 1))


def _suppliers(rng: np.random.Generator, comps: list[Component], leads: list[int], regions: list[tuple[str, float]],
               demand: int, due: int, last_start: int) -> list[Supplier]:
    """The suppliers: per component a daily capacity around what the demand needs over its
    ordering days (the cheapest, first, short of it; one sole supplier with room)."""
    suppliers = []
    for s, (region, mult) in enumerate(regions):
        caps = {}
        for comp in comps:
            last = comp.deadline if comp.deadline is not None and comp.late_penalty is None else due
            order_days = max(1, min(last, last_start) - leads[s] + 1)
            per_day = comp.bom * demand / order_days
            share = rng.uniform(0.45, 0.7) if s == 0 else rng.uniform(0.9, 1.3)
            if len(regions) == 1:
                share = 1.6
            caps[comp.name] = max(1, math.ceil(per_day * share))
        suppliers.append(Supplier(supplier_id=f"supplier{s + 1}", location=region, lead_time=leads[s],
                                  cost_multiplier=mult, capacity=caps))
    return suppliers


def _facilities(rng: np.random.Generator, demand: int, span: int, down: int) -> list[Facility]:
    """One facility per stage, with room for the demand over the days it can work (assembly
    loses the breakdown's days)."""
    facilities = []
    for k, stage in enumerate(STAGES):
        usable = max(1, span - (down if k == 0 else 0))
        cap = math.ceil(demand / usable * rng.uniform(2.0, 2.5))
        facilities.append(Facility(facility_id=stage, location="usa", capacity=cap,
                                   cost_per_unit=_draw(rng, STAGE_COSTS[k])))
    return facilities


def _lead_times(size: str, S: int, last_start: int) -> list[int]:
    """Lead times by supplier: the cheapest (first) is the slowest; they leave at least two
    ordering days (``late``: the cheapest delivers the day after the last on-time arrival)."""
    max_lead = max(1, min(3 if size == "small" else 4, last_start - 1))
    leads = [max(1, max_lead - k) for k in range(S)]
    if size == "late":
        leads[0] = last_start + 1
    return leads


def _components(
    rng: np.random.Generator, C: int, demand: int, last_start: int, leads: list[int], late: bool
) -> list[Component]:
    """The first ``C`` components: bill of materials, price, some stock; the main one has a
    hard deadline (``late``: a soft one no supplier can meet, and no stock)."""
    comps = []
    for c in range(C):
        cname, bom_range, price_range = COMPONENTS[c]
        bom, price = _draw(rng, bom_range), _draw(rng, price_range)
        stock = int(rng.integers(0, bom * demand // 5 + 1))
        deadline = None if c else last_start - int(rng.integers(0, 2))
        late_penalty = None
        if late and c == 0:
            deadline, late_penalty, stock = min(leads) - 1, max(1, price // 20), 0
        comps.append(Component(name=cname, bom=bom, price=price, holding=max(1, price // 60),
                               deadline=deadline, late_penalty=late_penalty, stock=stock))
    return comps


def _disruption_days(
    rng: np.random.Generator, size: str, leads: list[int], last_start: int
) -> tuple[float, int, int, int, int]:
    """(shortage share, shortage start, assembly's working span, breakdown days, breakdown
    start): a shortage of the main component at the cheapest supplier, and a breakdown in
    the first half of assembly's days."""
    shortage = round(float(rng.uniform(0.3, 0.6)) * 20) / 20
    short_start = int(rng.integers(1, 3))
    first_assembly = min(leads)
    span = max(1, last_start - first_assembly + 1)
    down = 1 if size == "small" else int(rng.integers(2, 4))
    down = min(down, max(1, span - 2))
    down_start = int(rng.integers(first_assembly, max(first_assembly + 1, first_assembly + (span - down) // 2 + 1)))
    return shortage, short_start, span, down, down_start


def _budget(
    rng: np.random.Generator, comps: list[Component], facilities: list[Facility], regions: list[tuple[str, float]],
    demand: int,
) -> tuple[int, float]:
    """The budget (between the cheapest and the dearest way to buy and make the demand, in
    hundreds) and the most one GPU can cost (dearest parts and every stage)."""
    unit_make = sum(f.cost_per_unit for f in facilities)
    cheap = sum(max(0, comp.bom * demand - comp.stock) * comp.price for comp in comps) + demand * unit_make
    dear = sum(max(0, comp.bom * demand - comp.stock) * comp.price * regions[-1][1] for comp in comps)
    dear += demand * unit_make
    budget = int(round(cheap + (dear - cheap) * rng.uniform(0.5, 0.8) + 0.05 * cheap, -2))
    unit_value = sum(comp.bom * comp.price * regions[-1][1] for comp in comps) + unit_make
    return budget, unit_value


def generate_p10(
    size: Size = "small",
    seed: int = 0,
    name: str | None = None,
    n_components: int | None = None,
    n_suppliers: int | None = None,
    n_days: int | None = None,
) -> P10Instance:
    """Draw a P10 instance of a size class; the same arguments give the same instance.

    ``n_components`` (1..8), ``n_suppliers`` (1..4) and ``n_days`` (at least 6) fix the
    shape; components and suppliers are named in a fixed order (``gpu_chips``, ``memory``,
    ...; ``supplier1``, ...), so draws of one shape share every name. ``size="late"``: no
    supplier can deliver ``gpu_chips`` by its (soft) deadline, and the cheapest supplier's
    chips cannot be packaged by the due day (see the module docstring).
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {list(SIZES)}, got {size!r}")
    rng = np.random.default_rng(seed)
    spec = SIZES[size]
    C = n_components if n_components is not None else _draw(rng, spec["components"])
    S = n_suppliers if n_suppliers is not None else _draw(rng, spec["suppliers"])
    days = n_days if n_days is not None else _draw(rng, spec["days"])
    if not (1 <= C <= len(COMPONENTS) and 1 <= S <= len(REGIONS) and days >= 6):
        raise ValueError(f"need 1..{len(COMPONENTS)} components, 1..{len(REGIONS)} suppliers and >= 6 days; "
                         f"got {C}, {S}, {days}")
    due = days - 1
    last_start = due - 2  # the last day a component can arrive and still be packaged in time
    demand = _draw(rng, spec["demand"])

    leads = _lead_times(size, S, last_start)
    regions = [REGIONS[k] for k in range(S)]

    comps = _components(rng, C, demand, last_start, leads, size == "late")
    shortage, short_start, span, down, down_start = _disruption_days(rng, size, leads, last_start)
    suppliers = _suppliers(rng, comps, leads, regions, demand, due, last_start)
    facilities = _facilities(rng, demand, span, down)
    budget, unit_value = _budget(rng, comps, facilities, regions, demand)
    disruptions = [
        Shortage(component=comps[0].name, supplier=suppliers[0].supplier_id, shortage=shortage, start=short_start),
        Breakdown(facility="assembly", start=down_start, duration=down),
    ]
    return with_derived_penalty(P10Instance(
        name=name or f"p10_{size}_seed{seed}",
        description=f"Generated GPU supply chain ({size}, seed {seed}): {C} components, {S} suppliers, "
                    f"{days} days, {demand} GPUs",
        size=size,
        demand=demand,
        due_day=due,
        horizon=due + max(3, days // 2),
        lateness_penalty=int(math.ceil(LATENESS_SHARE * unit_value)),
        budget=budget,
        shortfall_penalty=0,  # derived from the rest below
        wip_holding=_draw(rng, (1, 3)),
        components=comps,
        suppliers=suppliers,
        facilities=facilities,
        disruptions=disruptions,
    ))
