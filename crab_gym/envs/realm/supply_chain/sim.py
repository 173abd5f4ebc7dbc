"""The day-by-day dynamics of a P10 episode: what happens when the agent orders, produces and
ends a day.

Time is in days. A day begins with the arrivals due that day and the disruptions striking
then; during the day the agent orders (paid at once, arriving ``lead_time`` days later) and
produces (assembly from components on hand, testing and packaging from what the previous
stage finished on earlier days); at its end the day's output joins the next stage's stock
and holding is charged. Arrivals and disruptions are events on an
:class:`~crab_gym.envs.realm.common.event_clock.EventClock`, so every later arrival is one
queue entry, and the state copies cheaply for look-ahead and re-solves.

Limits come in two strengths: :meth:`SupplySim.order_limit` / :meth:`produce_limit` are the
hard constraints (what a submitted plan must keep); :meth:`order_useful` /
:meth:`produce_useful` also rule out what cannot help (an order arriving too late to be
packaged, more than the demand still needs): the step-wise actions' mask.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from crab_gym.envs.realm.common.event_clock import EventClock
from crab_gym.envs.realm.supply_chain.model import STAGES, P10Instance, facility_capacity, supplier_capacity

ASSEMBLY, TESTING, PACKAGING = range(len(STAGES))


class PlanError(ValueError):
    """A plan entry that breaks a hard constraint when its day comes."""


@dataclass(frozen=True)
class Order:
    """An order placed: component and supplier indices, units, the day placed and the day due."""

    c: int
    s: int
    quantity: int
    day: int
    eta: int
    cost: int


@dataclass(frozen=True)
class Run:
    """A production run: stage index, day, units, cost."""

    k: int
    day: int
    quantity: int
    cost: int


@dataclass(frozen=True)
class DayRecord:
    """How a day ended: components on hand, stage stocks, each stage's output, money spent."""

    day: int
    on_hand: tuple[int, ...]
    stock: tuple[int, ...]
    made: tuple[int, ...]
    spent: int


class SupplySim:
    """The state of one episode, and the moves that change it.

    Attributes:
        day: the current day (the due day once :attr:`done`).
        on_hand: units of each component on hand now.
        stock: finished by assembly / testing on earlier days, not yet used by the next stage.
        made_today: units each stage made today (joining the next stage's stock tonight).
        delivered: GPUs packaged on earlier days.
        purchase, production, holding: money spent so far, by kind.
        lateness: the lateness cost so far (GPUs packaged after the due day, orders arriving
            after a soft deadline).
        fired: the disruptions in force or over (known to the agent), in the order they struck.
        orders, runs: everything done so far (the executed plan).
    """

    def __init__(self, inst: P10Instance, schedule: list[Any] | None = None) -> None:
        self.inst = inst
        C, S = len(inst.components), len(inst.suppliers)
        self.clock = EventClock(0)
        self.on_hand = [c.stock for c in inst.components]
        self.stock = [0, 0]
        self.made_today = [0, 0, 0]
        self.ordered_today = [[0] * C for _ in range(S)]
        self.delivered = 0
        self.assembled = 0
        self.purchase = self.production = self.holding = self.lateness = 0
        self.fired: list[Any] = []
        self.orders: list[Order] = []
        self.history: list[DayRecord] = []
        self.runs: list[Run] = []
        self.done = False
        for d in schedule if schedule is not None else inst.disruptions:
            self.schedule_disruption(d)
        self.fire(self.clock.due())

    # ------------------------------------------------------------------ reading the state
    @property
    def day(self) -> int:
        return self.clock.now

    @property
    def spent(self) -> int:
        """Purchases plus production so far (what the budget bounds)."""
        return self.purchase + self.production

    def shortfall(self) -> int:
        """GPUs not packaged (final once :attr:`done`)."""
        return self.inst.demand - self.delivered - self.made_today[PACKAGING]

    def cost(self) -> int:
        """Purchase + production + holding + lateness + the shortfall penalty (the objective)."""
        return self.spent + self.holding + self.lateness + self.inst.shortfall_penalty * self.shortfall()

    def through(self, k: int) -> int:
        """Units that have passed stage ``k`` so far (today's output included)."""
        packaged = self.delivered + self.made_today[PACKAGING]
        if k == ASSEMBLY:
            return self.assembled
        if k == TESTING:
            return self.stock[TESTING] + self.made_today[TESTING] + packaged
        return packaged

    def state_key(self) -> tuple[Any, ...]:
        """Everything that decides what can happen from now on, hashable (for caches)."""
        return (self.day, self.done, tuple(self.on_hand), tuple(self.stock), tuple(self.made_today),
                tuple(map(tuple, self.ordered_today)), self.delivered, self.assembled, self.purchase,
                self.production, self.holding, self.lateness, tuple(self.clock.pending()), tuple(self.fired))

    def in_transit(self) -> list[tuple[int, int, int]]:
        """``(day, component, units)`` of every order still on its way."""
        return [(t, e[1], e[2]) for t, e in self.clock.pending() if e[0] == "arrive"]

    def pending_disruptions(self) -> list[Any]:
        """The scheduled disruptions that have not struck yet (unknown to the agent)."""
        return [e[1] for _, e in self.clock.pending() if e[0] == "disrupt"]

    def idle_today(self) -> bool:
        """Nothing has been ordered or made today yet."""
        return not any(self.made_today) and not any(map(any, self.ordered_today))

    def supplier_left(self, s: int, c: int) -> int:
        """Units of ``c`` supplier ``s`` can still take orders for today."""
        return max(0, self._capacities()[0][s][c] - self.ordered_today[s][c])

    def facility_left(self, k: int) -> int:
        """Units stage ``k`` can still make today."""
        return max(0, self._capacities()[1][k] - self.made_today[k])

    def _capacities(self) -> tuple[list[list[int]], list[int]]:
        """:func:`~.model.supplier_capacity` of every ``[s][c]`` and
        :func:`~.model.facility_capacity` of every stage today: worked out once per day and
        set of disruptions struck (``fired`` only grows), not on every mask and observation."""
        inst, day, fired = self.inst, self.clock.now, self.fired
        key = (day, len(fired), inst)
        known = self.__dict__.get("_capacity_memo")
        if known is None or known[0] != key:
            suppliers = [[supplier_capacity(inst, fired, s, c, day) for c in range(len(inst.components))]
                         for s in range(len(inst.suppliers))]
            facilities = [facility_capacity(inst, fired, k, day) for k in range(len(STAGES))]
            known = self._capacity_memo = (key, suppliers, facilities)
        return known[1], known[2]

    def coming(self) -> list[int]:
        """Units of each component on their way (:meth:`in_transit` summed per component)."""
        out = [0] * len(self.inst.components)
        for _, _, event in self.clock._queue:  # pending(), unsorted: a sum's order is moot
            if event[0] == "arrive":
                out[event[1]] += event[2]
        return out

    def budget_left(self) -> int:
        return self.inst.budget - self.spent

    # ------------------------------------------------------------------ limits
    def order_limit(self, c: int, s: int) -> tuple[int, str]:
        """The most units of ``c`` orderable from ``s`` now under the hard constraints, and
        the binding reason when that is 0."""
        inst = self.inst
        if self.done:
            return 0, "the plan is over"
        eta = self.day + inst.suppliers[s].lead_time
        if eta > inst.last_arrival(c):
            return 0, (f"{inst.components[c].name} from {inst.supplier_ids[s]} would arrive on day {eta}, "
                       f"after its last arrival day {inst.last_arrival(c)}")
        left = self.supplier_left(s, c)
        if left <= 0:
            return 0, f"{inst.supplier_ids[s]} has no {inst.components[c].name} left to sell today"
        price = inst.prices[s][c]
        if price > 0:
            left = min(left, self.budget_left() // price)
            if left <= 0:
                return 0, f"the budget left ({self.budget_left()}) does not pay one unit at {price}"
        return left, ""

    def produce_limit(self, k: int) -> tuple[int, str]:
        """The most units stage ``k`` can make now under the hard constraints, and why 0."""
        inst = self.inst
        if self.done:
            return 0, "the plan is over"
        left = self.facility_left(k)
        if left <= 0:
            return 0, f"{STAGES[k]} has no capacity left today"
        if k == ASSEMBLY:
            inputs = min(self.on_hand[c] // comp.bom for c, comp in enumerate(inst.components))
            what = "components on hand"
        else:
            inputs, what = self.stock[k - 1], f"units {STAGES[k - 1]} finished on earlier days"
        if inputs <= 0:
            return 0, f"{STAGES[k]} has no input: no {what}"
        left = min(left, inputs)
        if k == PACKAGING:
            left = min(left, self.shortfall())
            if left <= 0:
                return 0, "the whole demand is packaged"
        cost = inst.facilities[k].cost_per_unit
        if cost > 0:
            left = min(left, self.budget_left() // cost)
            if left <= 0:
                return 0, f"the budget left ({self.budget_left()}) does not pay one unit at {cost}"
        return left, ""

    def still_needed(self, c: int, coming: list[int] | None = None) -> int:
        """Units of ``c`` the demand still needs beyond those on hand or on their way
        (``coming``: :meth:`coming`, when the caller has it already)."""
        inst = self.inst
        on_way = (self.coming() if coming is None else coming)[c]
        return max(0, inst.need(c) - inst.components[c].bom * self.assembled - self.on_hand[c] - on_way)

    def order_useful(self, c: int, s: int) -> tuple[int, str]:
        """:meth:`order_limit` narrowed to what can still help: arriving in time to be
        assembled, tested and packaged by the plan's last day, and no more than the demand
        still needs."""
        left, why = self.order_limit(c, s)
        if left <= 0:
            return 0, why
        eta = self.day + self.inst.suppliers[s].lead_time
        if eta > self.inst.end_day - PACKAGING:
            return 0, f"arriving on day {eta} is too late to assemble, test and package by day {self.inst.end_day}"
        need = self.still_needed(c)
        if need <= 0:
            return 0, f"the demand needs no more {self.inst.components[c].name}"
        return min(left, need), ""

    def order_room(self, c: int, s: int, coming: list[int] | None = None) -> int:
        """:meth:`order_useful`'s amount alone (the mask's hot path: the same rules, no
        reasons built; ``coming``: :meth:`coming`, when the caller has it already)."""
        inst = self.inst
        eta = self.day + inst.suppliers[s].lead_time
        if self.done or eta > inst.last_arrival(c) or eta > inst.end_day - PACKAGING:
            return 0
        left = self.supplier_left(s, c)
        price = inst.prices[s][c]
        if price > 0:
            left = min(left, self.budget_left() // price)
        if left <= 0:
            return 0
        return max(0, min(left, self.still_needed(c, coming)))

    def produce_useful(self, k: int) -> tuple[int, str]:
        """:meth:`produce_limit` narrowed to what can still be packaged by the plan's last day."""
        left, why = self.produce_limit(k)
        if left <= 0:
            return 0, why
        if self.day > self.inst.end_day - (PACKAGING - k):
            return 0, f"{STAGES[k]} on day {self.day} is too late to package by day {self.inst.end_day}"
        if k == ASSEMBLY:
            left = min(left, self.inst.demand - self.assembled)
            if left <= 0:
                return 0, "the whole demand is assembled"
        return left, ""

    # ------------------------------------------------------------------ moves
    def order(self, c: int, s: int, quantity: int) -> Order:
        """Place an order (raises :class:`PlanError` if it breaks a hard constraint)."""
        left, why = self.order_limit(c, s)
        if quantity > left:
            raise PlanError(why or f"at most {left} unit(s) of {self.inst.components[c].name} "
                            f"from {self.inst.supplier_ids[s]} on day {self.day}, not {quantity}")
        inst = self.inst
        eta = self.day + inst.suppliers[s].lead_time
        cost = quantity * inst.prices[s][c]
        self.ordered_today[s][c] += quantity
        self.purchase += cost
        self.lateness += quantity * inst.arrival_lateness(c, eta)
        if eta == self.day:
            self.on_hand[c] += quantity
        else:
            self.clock.schedule(eta, ("arrive", c, quantity))
        placed = Order(c, s, quantity, self.day, eta, cost)
        self.orders.append(placed)
        return placed

    def produce(self, k: int, quantity: int) -> Run:
        """Make ``quantity`` units at stage ``k`` today (raises :class:`PlanError` if it
        breaks a hard constraint)."""
        left, why = self.produce_limit(k)
        if quantity > left:
            raise PlanError(why or f"{STAGES[k]} can make at most {left} unit(s) on day {self.day}, not {quantity}")
        inst = self.inst
        if k == ASSEMBLY:
            for c, comp in enumerate(inst.components):
                self.on_hand[c] -= comp.bom * quantity
            self.assembled += quantity
        else:
            self.stock[k - 1] -= quantity
            if k == PACKAGING:
                self.lateness += quantity * inst.packing_lateness(self.day)
        self.made_today[k] += quantity
        cost = quantity * inst.facilities[k].cost_per_unit
        self.production += cost
        run = Run(k, self.day, quantity, cost)
        self.runs.append(run)
        return run

    def next_day(self) -> list[Any]:
        """End the day (output moves on, holding is charged) and begin the next one; returns
        the disruptions that struck at its start. After the plan's last day it is over."""
        inst = self.inst
        made = list(self.made_today)
        self.stock[ASSEMBLY] += self.made_today[ASSEMBLY]
        self.stock[TESTING] += self.made_today[TESTING]
        self.delivered += self.made_today[PACKAGING]
        self.made_today = [0, 0, 0]
        self.ordered_today = [[0] * len(row) for row in self.ordered_today]
        self.holding += sum(comp.holding * q for comp, q in zip(inst.components, self.on_hand))
        self.holding += inst.wip_holding * sum(self.stock)
        self.history.append(DayRecord(self.day, tuple(self.on_hand), tuple(self.stock), tuple(made), self.spent))
        if self.day >= inst.end_day:
            self.done = True
            return []
        return self.fire(self.clock.advance(until=self.day + 1))

    def fire(self, events: list[Any]) -> list[Any]:
        """Apply due events: arrivals join the stock, disruptions strike; returns the latter."""
        struck = []
        for event in events:
            if event[0] == "arrive":
                self.on_hand[event[1]] += event[2]
            else:
                self.fired.append(event[1])
                struck.append(event[1])
        return struck

    def schedule_disruption(self, d: Any) -> Any:
        """Add a disruption: it strikes when its start day begins (a start not later than
        today strikes now; if today's decisions have begun, it counts from tomorrow, so that
        no decision already taken breaks it). Returns the disruption with its start set."""
        start = self.day if d.start is None else int(d.start)
        if start <= self.day:
            start = self.day if self.idle_today() else self.day + 1
        if start != d.start:
            d = d.model_copy(update={"start": start})
        self.clock.schedule(start, ("disrupt", d))
        return d

    def run_to_end(self) -> None:
        """End every remaining day with nothing more done."""
        while not self.done:
            self.next_day()

    def copy(self) -> SupplySim:
        """An independent copy (for checks, look-ahead and re-solves)."""
        return copy.deepcopy(self, {id(self.inst): self.inst})

    def without_future(self) -> SupplySim:
        """A copy that will face no disruption that has not struck yet (what the agent knows)."""
        twin = self.copy()
        twin.clock = EventClock(self.day)
        for t, e in self.clock.pending():
            if e[0] == "arrive":
                twin.clock.schedule(t, e)
        return twin
