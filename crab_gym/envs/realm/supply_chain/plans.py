"""Whole plans for P10: ``submit_plan`` arguments checked against what the agent knows, and
carried out day by day, pausing when a disruption strikes.

A plan lists ``orders`` (component, supplier, quantity, day) and ``production`` (facility,
day, quantity). Entries dated before today are skipped (so a plan paused by a disruption can
be submitted again as it was); each remaining day's orders are placed in the listed order,
then the stages make their units in stage order, then the day ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.supply_chain.model import STAGES
from crab_gym.envs.realm.supply_chain.sim import PlanError, SupplySim


@dataclass
class DayPlan:
    """A plan's entries from today on, as indices: ``orders`` ``(c, s, q, day, entry)`` and
    ``runs`` ``(k, day, q, entry)`` where ``entry`` names the argument (``orders[3]``)."""

    orders: list[tuple[int, int, int, int, str]] = field(default_factory=list)
    runs: list[tuple[int, int, int, str]] = field(default_factory=list)

    def last_day(self) -> int:
        return max([o[3] for o in self.orders] + [r[1] for r in self.runs], default=-1)

    def left_after(self, day: int) -> bool:
        """Whether entries remain for ``day`` or later."""
        return self.last_day() >= day

    def as_arguments(self, sim: SupplySim, since: int) -> dict[str, list[dict[str, Any]]]:
        """The entries dated ``since`` or later, as ``submit_plan`` arguments."""
        inst = sim.inst
        return {
            "orders": [{"component": inst.component_names[c], "supplier": inst.supplier_ids[s], "quantity": q,
                        "day": t} for c, s, q, t, _ in self.orders if t >= since],
            "production": [{"facility": STAGES[k], "day": t, "quantity": q} for k, t, q, _ in self.runs if t >= since],
        }


def parse_plan(sim: SupplySim, orders: list[Mapping[str, Any]], production: list[Mapping[str, Any]]) -> DayPlan:
    """The entries of a plan dated today or later, as indices (names are already validated)."""
    inst = sim.inst
    C = {n: i for i, n in enumerate(inst.component_names)}
    S = {n: i for i, n in enumerate(inst.supplier_ids)}
    K = {n: k for k, n in enumerate(STAGES)}
    plan = DayPlan()
    for i, o in enumerate(orders):
        if o["day"] >= sim.day:
            plan.orders.append((C[o["component"]], S[o["supplier"]], int(o["quantity"]), int(o["day"]), f"orders[{i}]"))
    for j, r in enumerate(production):
        if r["day"] >= sim.day:
            plan.runs.append((K[r["facility"]], int(r["day"]), int(r["quantity"]), f"production[{j}]"))
    plan.runs.sort(key=lambda r: (r[1], r[0]))
    return plan


def carry_out(sim: SupplySim, plan: DayPlan, *, pause: bool = True,
              on_strike: Callable[[list[Any]], None] | None = None) -> list[Any]:
    """Do the plan in ``sim`` day by day to the end of the plan, or (``pause``) until a
    disruption strikes while entries remain; returns the disruptions that struck.
    ``on_strike(struck)`` runs at the start of each day a disruption strikes, before that
    day's entries (the state the agent faces then: the adaptation snapshot). Raises
    :class:`PlanError` naming the entry that breaks a hard constraint (``sim`` is then
    partly changed: check on a copy first)."""
    struck: list[Any] = []
    while not sim.done:
        today = sim.day
        current = ""
        try:
            for c, s, q, t, entry in plan.orders:
                if t == today:
                    current = entry
                    sim.order(c, s, q)
            for k, t, q, entry in plan.runs:
                if t == today:
                    current = entry
                    sim.produce(k, q)
        except PlanError as exc:
            raise PlanError(f"{current} (day {today}): {exc}") from None
        fired = sim.next_day()
        struck.extend(fired)
        if fired and on_strike is not None:
            on_strike(fired)
        if pause and fired and not sim.done and plan.left_after(sim.day):
            break
    return struck


def check_against_known(sim: SupplySim, plan: DayPlan) -> str | None:
    """Why the plan breaks a hard constraint with what the agent knows now (the disruptions
    that have struck), or None. Runs on a copy that faces no future disruption."""
    try:
        carry_out(sim.without_future(), plan, pause=False)
    except PlanError as exc:
        return str(exc)
    return None
