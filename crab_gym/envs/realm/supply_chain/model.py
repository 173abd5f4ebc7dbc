"""REALM-Bench P10, the global GPU supply chain: the instance type and its disruptions.

Units: **time is in whole days** (day 0 is the first planning day; the GPUs are due on the
``due_day`` and the plan ends with the ``horizon``, the last day a late GPU may still be
packaged), money in currency units, quantities in units (GPUs, components).

* **Decision**: orders per (component, supplier, day, quantity) and production per
  (facility, day, quantity).
* **Hard constraints**: a supplier ships at most ``capacity[component]`` units of a component
  ordered on one day (less during a shortage); an order placed on day ``t`` arrives at the
  start of day ``t + lead_time``, by the horizon, and no later than the component's
  ``deadline`` when that deadline is hard (``late_penalty`` None); a day's
  assembly uses components on hand (``bom`` units of each per GPU); each later stage (testing,
  then packaging) uses units the previous stage finished on an earlier day; a facility
  makes at most its ``capacity`` per day (none while broken down); purchases plus production
  stay within the ``budget``; at most ``demand`` GPUs are packaged.
* **Objective**: minimise purchase + production + holding (components on hand and work in
  progress at the end of each day) + lateness (``lateness_penalty`` per GPU per day it is
  packaged after the due day; a component's ``late_penalty`` per unit per day an order of
  it arrives after its soft deadline) + ``shortfall_penalty`` per GPU not packaged by the
  horizon. A plan is *feasible* when it keeps every hard constraint; a GPU it leaves short
  costs the ``shortfall_penalty`` (generated and upstream instances: :func:`derived_penalty`,
  above everything else any plan can cost, so that a plan delivering fewer GPUs always costs
  more, and at least 20 times the most one GPU can cost, so that doing nothing scores at
  most 0.05).

Upstream REALM-Bench P10 files give no demand, prices or bill of materials; the generator
(:mod:`.generator`) and the upstream reader (:mod:`.formats`) define them.
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem
from crab_gym.envs.realm.common.limits import NonNegInt, PosInt
from crab_gym.envs.realm.common.uniqueness import check_unique

#: Where the shipped instances and their ``references.json`` live.
INSTANCE_DIR = Path(__file__).with_name("instances")

#: The production stages, in the order a GPU passes them.
STAGES: tuple[str, ...] = ("assembly", "testing", "packaging")

#: Longest plan (days) an instance may have: keeps observations and the oracle small.
MAX_DAYS = 400

#: A GPU never packaged costs at least this many times :attr:`P10Instance.gpu_cost_bound`
#: (generated and upstream instances, :func:`derived_penalty`): doing nothing (every GPU
#: short) then costs over 20 times the best plan, so it scores optimality below 0.05.
SHORTFALL_FACTOR = 20

Fraction = Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)]
Money = Annotated[int, Field(ge=0, le=10**12)]


class Component(BaseModel):
    """A component bought from suppliers.

    Attributes:
        name: e.g. ``gpu_chips``.
        bom: units per finished GPU (bill of materials).
        price: base unit price (currency units); a supplier charges ``round(price * multiplier)``.
        holding: cost per unit on hand per day.
        deadline: the day orders of it are due (None: none). Hard when ``late_penalty`` is
            None (no order may arrive later), else soft.
        late_penalty: per unit per day an order of it arrives after its ``deadline`` (None:
            the deadline is hard).
        stock: units on hand on day 0.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    bom: PosInt
    price: NonNegInt
    holding: NonNegInt = 0
    deadline: NonNegInt | None = None
    late_penalty: NonNegInt | None = None
    stock: NonNegInt = 0


class Supplier(BaseModel):
    """A supplier: ships every component it has a capacity for, after its lead time.

    Attributes:
        supplier_id: e.g. ``supplier1`` (a stable actor name).
        location: region, for display.
        lead_time: days from ordering to arrival.
        cost_multiplier: its prices are the components' base prices times this.
        capacity: per component, the most units ordered from it on one day.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    supplier_id: str = Field(min_length=1)
    location: str = ""
    lead_time: Annotated[int, Field(ge=0, le=MAX_DAYS, description="days; at most the longest plan")]
    cost_multiplier: Annotated[float, Field(gt=0.0, le=1000.0, allow_inf_nan=False)] = 1.0
    capacity: dict[str, NonNegInt]


class Facility(BaseModel):
    """One production stage (``assembly``, ``testing`` or ``packaging``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    facility_id: Literal["assembly", "testing", "packaging"]
    location: str = ""
    capacity: NonNegInt = Field(description="units per day")
    cost_per_unit: NonNegInt


class Shortage(BaseModel):
    """A component shortage: orders of ``component`` placed on days ``start ..
    start + duration - 1`` (to the end when ``duration`` is None) get ``1 - shortage`` of the
    supplier's capacity (rounded down), at ``supplier`` or every supplier (None)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["resource_shortage"] = "resource_shortage"
    component: str
    supplier: str | None = None
    shortage: Fraction
    start: NonNegInt | None = Field(default=None, description="day it strikes (None: now, when injected)")
    duration: PosInt | None = None

    def active(self, day: int) -> bool:
        start = 0 if self.start is None else self.start
        return start <= day and (self.duration is None or day < start + self.duration)

    def describe(self) -> str:
        where = self.supplier or "every supplier"
        span = "to the end" if self.duration is None else f"for {self.duration} day(s)"
        return f"shortage of {self.component} at {where}: capacity -{self.shortage:.0%} from day {self.start} {span}"


class Breakdown(BaseModel):
    """A facility breakdown: ``facility`` makes nothing on days ``start .. start + duration - 1``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["machine_breakdown"] = "machine_breakdown"
    facility: Literal["assembly", "testing", "packaging"]
    start: NonNegInt | None = Field(default=None, description="day it strikes (None: now, when injected)")
    duration: PosInt

    def active(self, day: int) -> bool:
        start = 0 if self.start is None else self.start
        return start <= day < start + self.duration

    def describe(self) -> str:
        return f"{self.facility} breaks down from day {self.start} for {self.duration} day(s)"


Disruption = Annotated[Shortage | Breakdown, Field(discriminator="type")]


class P10Instance(BaseModel):
    """One supply-chain instance (days, currency units, units)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    size: str | None = None
    demand: PosInt = Field(description="GPUs to package by the due day")
    due_day: Annotated[int, Field(ge=0, le=MAX_DAYS - 1)]
    horizon: Annotated[int, Field(ge=0, le=MAX_DAYS - 1)] | None = Field(
        None, description="the plan's last day: late GPUs may be packaged until then (None: the due day)")
    lateness_penalty: Money = Field(0, description="per GPU per day it is packaged after the due day")
    budget: Money = Field(description="bound on purchases plus production")
    shortfall_penalty: Money = Field(description="per GPU not packaged by the horizon")
    wip_holding: NonNegInt = Field(0, description="cost per unit of work in progress per day")
    components: list[Component] = Field(min_length=1)
    suppliers: list[Supplier] = Field(min_length=1)
    facilities: list[Facility] = Field(min_length=3, max_length=3)
    disruptions: list[Disruption] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> P10Instance:
        check_unique([c.name for c in self.components], "components[{}].name", "component")
        check_unique([s.supplier_id for s in self.suppliers], "suppliers[{}].supplier_id", "supplier")
        ids = tuple(f.facility_id for f in self.facilities)
        if ids != STAGES:
            raise FieldProblem("facilities", f"expected the stages {list(STAGES)} in this order, got {list(ids)}")
        if self.horizon is not None and self.horizon < self.due_day:
            raise FieldProblem("horizon", f"the plan's last day ({self.horizon}) is before the due day ({self.due_day})")
        names = set(self.component_names)
        for i, s in enumerate(self.suppliers):
            for c in s.capacity:
                if c not in names:
                    raise FieldProblem(f"suppliers[{i}].capacity[{c!r}]", "not one of the components")
        for i, d in enumerate(self.disruptions):
            if d.start is None:
                raise FieldProblem(f"disruptions[{i}].start", "an instance's own disruption needs a start day")
            if isinstance(d, Shortage):
                if d.component not in names:
                    raise FieldProblem(f"disruptions[{i}].component", f"{d.component!r} is not one of the components")
                if d.supplier is not None and d.supplier not in self.supplier_ids:
                    raise FieldProblem(f"disruptions[{i}].supplier", f"{d.supplier!r} is not one of the suppliers")
        return self

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> P10Instance:
        """A copy; with ``update``, the values derived from the old fields are dropped
        (pydantic copies the ``cached_property`` values with the fields)."""
        copy = super().model_copy(update=update, deep=deep)
        if update:
            for name in _DERIVED:
                copy.__dict__.pop(name, None)
        return copy

    # -- conveniences -------------------------------------------------------------------
    @cached_property
    def component_names(self) -> list[str]:
        return [c.name for c in self.components]

    @cached_property
    def supplier_ids(self) -> list[str]:
        return [s.supplier_id for s in self.suppliers]

    @property
    def end_day(self) -> int:
        """The plan's last day: the ``horizon`` (the due day when none is given)."""
        return self.due_day if self.horizon is None else self.horizon

    @property
    def n_days(self) -> int:
        """Planning days: ``0 .. end_day``."""
        return self.end_day + 1

    @cached_property
    def prices(self) -> list[list[int]]:
        """``prices[s][c]``: what supplier ``s`` charges per unit of component ``c``."""
        return [[int(round(c.price * s.cost_multiplier)) for c in self.components] for s in self.suppliers]

    @cached_property
    def base_capacity(self) -> list[list[int]]:
        """``base_capacity[s][c]``: units of ``c`` orderable from ``s`` per day, undisrupted."""
        return [[int(s.capacity.get(c.name, 0)) for c in self.components] for s in self.suppliers]

    def last_arrival(self, c: int) -> int:
        """The last day an order of component ``c`` may arrive: its hard deadline, at most the
        plan's last day."""
        comp = self.components[c]
        if comp.deadline is None or comp.late_penalty is not None:
            return self.end_day
        return min(comp.deadline, self.end_day)

    def arrival_lateness(self, c: int, eta: int) -> int:
        """Cost per unit of component ``c`` arriving on day ``eta`` (after a soft deadline)."""
        comp = self.components[c]
        if comp.deadline is None or comp.late_penalty is None:
            return 0
        return comp.late_penalty * max(0, eta - comp.deadline)

    def packing_lateness(self, day: int) -> int:
        """Cost per GPU packaged on ``day`` (after the due day)."""
        return self.lateness_penalty * max(0, day - self.due_day)

    @cached_property
    def gpu_cost_bound(self) -> int:
        """The most one GPU can add to a plan's cost: its components at the dearest
        supplier's price, each arriving as late as the horizon after a soft deadline and held
        every day of the plan, its production, a night in progress every day of the plan,
        and packaging on the horizon (the most lateness). Any plan that can complete one more
        GPU does so for at most this (the penalty of leaving it short is far above)."""
        days = self.n_days
        total = sum(f.cost_per_unit for f in self.facilities) + days * self.wip_holding
        total += self.packing_lateness(self.end_day)
        for c, comp in enumerate(self.components):
            dearest = max(prices[c] for prices in self.prices)
            total += comp.bom * (dearest + self.arrival_lateness(c, self.end_day) + days * comp.holding)
        return total

    @cached_property
    def cost_ceiling(self) -> int:
        """The most any plan keeping the hard constraints can cost apart from its shortfall
        penalty: the budget (purchases and production), plus the initial stock and every
        unit the budget can buy held on every day and arriving on the horizon (a fractional
        knapsack over the units' holding-and-lateness per price, capped by the suppliers'
        undisrupted capacities), every unit assembly can make in progress every day, and the
        whole demand packaged on the horizon."""
        days = self.n_days
        assembly = self.facilities[0]
        made = assembly.capacity * days
        if assembly.cost_per_unit:
            made = min(made, self.budget // assembly.cost_per_unit)
        total = self.budget + days * self.wip_holding * made + self.demand * self.packing_lateness(self.end_day)
        total += days * sum(comp.holding * comp.stock for comp in self.components)
        return total + math.ceil(self._most_bought_weight())

    def _most_bought_weight(self) -> float:
        """The most holding and arrival lateness the units a plan buys can cost (the
        fractional knapsack of :attr:`cost_ceiling`: an upper bound, not a plan)."""
        items = []
        for c, comp in enumerate(self.components):
            weight = self.n_days * comp.holding + self.arrival_lateness(c, self.end_day)
            for s, sup in enumerate(self.suppliers):
                days = sum(1 for t in range(self.n_days) if t + sup.lead_time <= self.last_arrival(c))
                items.append((weight, self.prices[s][c], self.base_capacity[s][c] * days))
        total, left = 0.0, float(self.budget)
        for weight, price, units in sorted(items, key=lambda i: -i[0] / i[1] if i[1] else -math.inf):
            take = units if price == 0 else min(units, left / price)
            total += weight * take
            left -= price * take
        return total

    def need(self, c: int) -> int:
        """Units of component ``c`` the whole demand uses."""
        return self.components[c].bom * self.demand

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name, size or wording)."""
        return self._fingerprint

    @cached_property
    def _fingerprint(self) -> str:
        core = self.model_dump(exclude={"name", "description", "size"})
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]


def derived_penalty(inst: P10Instance) -> int:
    """The shortfall penalty of generated and upstream instances: the larger of
    ``cost_ceiling + 1`` (a plan short of one GPU more then costs more than any plan
    short of one fewer: a cheaper plan never delivers fewer GPUs, so success and the
    sub-goals are monotone in cost) and ``SHORTFALL_FACTOR x gpu_cost_bound`` (doing nothing
    costs over 20 times the best plan: optimality at most 0.05)."""
    return max(inst.cost_ceiling + 1, SHORTFALL_FACTOR * inst.gpu_cost_bound)


def with_derived_penalty(inst: P10Instance) -> P10Instance:
    """``inst`` with its :func:`derived_penalty` as the shortfall penalty."""
    return inst.model_copy(update={"shortfall_penalty": derived_penalty(inst)})


#: The cached values derived from an instance's fields.
_DERIVED = tuple(name for name, value in vars(P10Instance).items() if isinstance(value, cached_property))


def supplier_capacity(inst: P10Instance, disruptions: list, s: int, c: int, day: int) -> int:
    """Units of component ``c`` orderable from supplier ``s`` on ``day`` under ``disruptions``
    (shortages multiply: two 50 % shortages leave a quarter)."""
    cap = inst.base_capacity[s][c]
    factor = 1.0
    for d in disruptions:
        if (isinstance(d, Shortage) and d.component == inst.components[c].name
                and d.supplier in (None, inst.suppliers[s].supplier_id) and d.active(day)):
            factor *= 1.0 - d.shortage
    return cap if factor == 1.0 else int(cap * factor + 1e-9)


def facility_capacity(inst: P10Instance, disruptions: list, k: int, day: int) -> int:
    """Units stage ``k`` can make on ``day`` under ``disruptions`` (0 while broken down)."""
    for d in disruptions:
        if isinstance(d, Breakdown) and d.facility == STAGES[k] and d.active(day):
            return 0
    return inst.facilities[k].capacity
