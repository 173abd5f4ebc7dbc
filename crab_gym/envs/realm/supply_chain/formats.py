"""The files a P10 instance comes in, and the loader that tells them apart.

* crab_gym's own JSON: a :class:`~.model.P10Instance` dumped as is (the shipped instances);
* a user's own upstream REALM-Bench P10 file (``suppliers``, ``facilities``,
  ``delivery_deadlines``, ``disruption_scenarios``), converted by :func:`from_upstream_p10`.

Upstream P10 files lack most of the model, so the reader fills it, one
:class:`RealmRepairWarning` per fill (see ``docs/supply_chain.md``); malformed
input raises an :class:`InstanceFormatError` naming the file and the field.
"""

from __future__ import annotations

import graphlib
import math
import warnings
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.instance_files import InstanceFiles
from crab_gym.envs.realm.common.limits import is_number, too_large
from crab_gym.envs.realm.common.loading import validation_error
from crab_gym.envs.realm.supply_chain.model import (
    INSTANCE_DIR,
    MAX_DAYS,
    STAGES,
    Breakdown,
    Component,
    Facility,
    P10Instance,
    Shortage,
    Supplier,
    with_derived_penalty,
)

#: GPUs demanded when a file gives none (upstream never does).
DEFAULT_DEMAND = 100
#: Base unit prices by component name (currency units); others get ``DEFAULT_PRICE``.
DEFAULT_PRICES = {"gpu_chips": 250, "memory": 40, "cooling": 25, "power_supply": 45, "pcb": 50}
DEFAULT_PRICE = 30
#: Packaging, which upstream names in ``dependencies`` but never defines: cost per unit.
PACKAGING_COST = 25
#: Cost per unit of work in progress per day.
DEFAULT_WIP_HOLDING = 2
#: A component arriving after its deadline costs its base price divided by this, per unit per day.
LATE_ARRIVAL_DIVISOR = 20
#: A GPU packaged after the due day costs this share of its dearest cost per day.
LATENESS_SHARE = 0.05


def _number(value: Any, source: str, field: str, *, whole: bool = False, low: float = 0.0) -> float:
    if not is_number(value) or too_large(value) or value < low:
        raise InstanceFormatError(source, f"expected a number >= {low:g}, got {value!r}", field=field)
    if whole and value != int(value):
        raise InstanceFormatError(source, f"expected a whole number, got {value!r}", field=field)
    return float(value)


def _name(value: Any, source: str, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InstanceFormatError(source, f"expected a non-empty name, got {value!r}", field=field)
    return value


def _list(data: dict, key: str, source: str) -> list:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise InstanceFormatError(source, "expected a non-empty list", field=key)
    return value


def _fill(source: str, what: str, stacklevel: int = 3) -> None:
    """A repair warning; the default ``stacklevel`` names the caller of the function that calls this."""
    warnings.warn(f"{source}: {what}", RealmRepairWarning, stacklevel=stacklevel)


def from_upstream_p10(data: Any, source: str) -> P10Instance:
    """Convert a user's own upstream REALM-Bench P10 mapping into a :class:`P10Instance`.

    Read as given: suppliers (``capacity`` read as units per component per ordering day,
    ``lead_time`` in days, ``cost_multiplier``), components, assembly and testing
    (``capacity`` per day, ``cost_per_unit``), ``budget``, ``delivery_deadlines`` (the day
    those components are due), the two disruption scenarios. Filled, each with a
    :class:`RealmRepairWarning`: the demand (100 GPUs), the due day (two days after the
    latest deadline: assembly, testing and packaging each take a day), the horizon (half as
    many days again: late GPUs count until then) and the lateness penalty (a twentieth of a
    GPU's dearest cost per GPU per day late), a bill of materials of one unit per
    component, base prices and holding costs, soft deadlines (an order arriving after its
    component's deadline costs a twentieth of the base price per unit per day late: a late
    shipment is worth more than none), the packaging facility (testing's capacity, 25 per
    unit), the shortfall penalty (20 times the most one GPU can add to a plan's cost), and the disruptions' days
    (the shortage strikes every supplier from day 0 to the end; the breakdown starts when
    the first order can arrive).
    """
    names, last = _components_and_deadlines(data, source)
    suppliers = _suppliers(data, names, source)
    stages = _stages(data, source)
    budget = int(_number(data["budget"], source, "budget", whole=True))
    _check_dependencies(data.get("dependencies", []), names, source)

    longest = max([*last.values(), *(s.lead_time for s in suppliers)])
    due = longest + 2
    horizon = due + max(3, (due + 1) // 2)
    if horizon >= MAX_DAYS:
        raise InstanceFormatError(source, f"plans longer than {MAX_DAYS} days are not supported (due day {due}, "
                                          f"last day {horizon})", field="delivery_deadlines")
    facilities = [stages[s] for s in STAGES]
    components, lateness = _filled_components(names, last, suppliers, facilities, due, horizon, source)
    first_arrival = min(s.lead_time for s in suppliers)
    for comp, day in last.items():
        if first_arrival > day:
            warnings.warn(f"{source}: no supplier can deliver {comp} by its deadline (day {day}; the shortest lead "
                          f"time is {first_arrival} days): every unit of it arrives late", stacklevel=2)
    disruptions = _disruptions(data.get("disruption_scenarios", []), names, first_arrival, source)
    try:
        inst = with_derived_penalty(P10Instance(
            name=str(data.get("instance_id") or Path(str(source)).stem),
            description=str(data.get("description", "")),
            demand=DEFAULT_DEMAND, due_day=due, horizon=horizon, lateness_penalty=lateness, budget=budget,
            shortfall_penalty=0, wip_holding=DEFAULT_WIP_HOLDING, components=components,
            suppliers=suppliers, facilities=facilities, disruptions=disruptions,
        ))
    except ValidationError as exc:  # pragma: no cover - the checks above catch these first
        raise validation_error(exc, source) from None
    _fill(source, f"no penalty for GPUs not delivered; {inst.shortfall_penalty} per GPU (20 times the most one GPU "
                  f"can add to a plan's cost, {inst.gpu_cost_bound})")
    return inst


def _components_and_deadlines(data: Any, source: str) -> tuple[list[str], dict[str, int]]:
    """The required keys present; the component names (distinct) and their deadline days."""
    if not isinstance(data, dict):
        raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
    for key in ("suppliers", "components", "facilities", "budget", "delivery_deadlines"):
        if key not in data:
            raise InstanceFormatError(source, "missing required key", field=key)
    names = [_name(v, source, f"components[{i}]") for i, v in enumerate(_list(data, "components", source))]
    if len(set(names)) != len(names):
        raise InstanceFormatError(source, "component names repeat", field="components")
    deadlines = data["delivery_deadlines"]
    if not isinstance(deadlines, dict):
        raise InstanceFormatError(source, "expected an object {component: day}", field="delivery_deadlines")
    last: dict[str, int] = {}
    for comp, day in deadlines.items():
        field = f"delivery_deadlines[{comp!r}]"
        if comp not in names:
            raise InstanceFormatError(source, "not one of the components", field=field)
        last[comp] = int(_number(day, source, field, whole=True))
    return names, last


def _suppliers(data: dict, names: list[str], source: str) -> list[Supplier]:
    """The suppliers, each offering its ``capacity`` of every component per ordering day."""
    suppliers = []
    for i, raw in enumerate(_list(data, "suppliers", source)):
        at = f"suppliers[{i}]"
        if not isinstance(raw, dict):
            raise InstanceFormatError(source, "expected an object", field=at)
        for key in ("supplier_id", "capacity", "lead_time"):
            if key not in raw:
                raise InstanceFormatError(source, "missing required key", field=f"{at}.{key}")
        cap = int(_number(raw["capacity"], source, f"{at}.capacity", whole=True))
        mult = _number(raw.get("cost_multiplier", 1.0), source, f"{at}.cost_multiplier", low=1e-9)
        suppliers.append(Supplier(
            supplier_id=_name(raw["supplier_id"], source, f"{at}.supplier_id"),
            location=str(raw.get("location", "")),
            lead_time=int(_number(raw["lead_time"], source, f"{at}.lead_time", whole=True)),
            cost_multiplier=min(mult, 1000.0),
            capacity={c: cap for c in names},
        ))
    if len({s.supplier_id for s in suppliers}) != len(suppliers):
        raise InstanceFormatError(source, "supplier ids repeat", field="suppliers")
    return suppliers


def _stages(data: dict, source: str) -> dict[str, Facility]:
    """The facilities by stage: assembly and testing required, packaging filled in if missing."""
    stages: dict[str, Facility] = {}
    for i, raw in enumerate(_list(data, "facilities", source)):
        at = f"facilities[{i}]"
        if not isinstance(raw, dict):
            raise InstanceFormatError(source, "expected an object", field=at)
        fid = _name(raw.get("facility_id"), source, f"{at}.facility_id")
        if fid not in STAGES:
            raise InstanceFormatError(source, f"unknown facility {fid!r}; known stages: {', '.join(STAGES)}",
                                      field=f"{at}.facility_id")
        if fid in stages:
            raise InstanceFormatError(source, f"facility {fid!r} repeats", field=f"{at}.facility_id")
        for key in ("capacity", "cost_per_unit"):
            if key not in raw:
                raise InstanceFormatError(source, "missing required key", field=f"{at}.{key}")
        stages[fid] = Facility(
            facility_id=fid, location=str(raw.get("location", "")),
            capacity=int(_number(raw["capacity"], source, f"{at}.capacity", whole=True)),
            cost_per_unit=int(round(_number(raw["cost_per_unit"], source, f"{at}.cost_per_unit"))),
        )
    for fid in ("assembly", "testing"):
        if fid not in stages:
            raise InstanceFormatError(source, f"no {fid} facility", field="facilities")
    if "packaging" not in stages:
        stages["packaging"] = Facility(facility_id="packaging", location=stages["testing"].location,
                                       capacity=stages["testing"].capacity, cost_per_unit=PACKAGING_COST)
        _fill(source, f"facility 'packaging' is never defined; added with testing's capacity "
                      f"({stages['testing'].capacity}/day) at {PACKAGING_COST} per unit", stacklevel=4)
    return stages


def _filled_components(
    names: list[str], last: dict[str, int], suppliers: list[Supplier], facilities: list[Facility], due: int,
    horizon: int, source: str,
) -> tuple[list[Component], int]:
    """The components with what upstream lacks filled in (bill of materials, prices, holding,
    soft deadlines), and the lateness penalty; one repair warning per fill."""
    prices = {c: DEFAULT_PRICES.get(c, DEFAULT_PRICE) for c in names}
    dearest = max(s.cost_multiplier for s in suppliers)
    unit = sum(prices.values()) * dearest + sum(f.cost_per_unit for f in facilities)
    lateness = int(math.ceil(LATENESS_SHARE * unit))
    _fill(source, f"no demand given; {DEFAULT_DEMAND} GPUs due on day {due} (two days after the latest "
                  "deadline or lead time: assembly, testing and packaging take a day each), late ones packaged "
                  f"until day {horizon} at {lateness} per GPU per day late", stacklevel=4)
    _fill(source, "no bill of materials; one unit of each component per GPU", stacklevel=4)
    _fill(source, "no component prices; base prices " + ", ".join(f"{c} {p}" for c, p in prices.items())
          + " (times each supplier's cost_multiplier); holding one unit per day per 60 of price (at least 1), "
          f"work in progress {DEFAULT_WIP_HOLDING}", stacklevel=4)
    components = [Component(name=c, bom=1, price=prices[c], holding=max(1, prices[c] // 60), deadline=last.get(c),
                            late_penalty=max(1, prices[c] // LATE_ARRIVAL_DIVISOR) if c in last else None)
                  for c in names]
    if last:
        _fill(source, "delivery_deadlines are soft: an order arriving later costs, per unit per day late, "
              + ", ".join(f"{comp.name} {comp.late_penalty}" for comp in components if comp.late_penalty),
              stacklevel=4)
    return components, lateness


def _check_dependencies(deps: Any, names: list[str], source: str) -> None:
    """Upstream's ``dependencies`` are pairs ``[before, after]`` over components and stages;
    the model's stage order (components -> assembly -> testing -> packaging) already holds
    them, so they are only checked: known names, no cycle, nothing against that order."""
    if not isinstance(deps, list):
        raise InstanceFormatError(source, "expected a list of [before, after] pairs", field="dependencies")
    known = set(names) | set(STAGES)
    for i, pair in enumerate(deps):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise InstanceFormatError(source, f"expected [before, after], got {pair!r}", field=f"dependencies[{i}]")
        for x in pair:
            if x not in known:
                raise InstanceFormatError(source, f"{x!r} is neither a component nor a stage",
                                          field=f"dependencies[{i}]")
    _check_no_cycle(deps, source)
    rank = {**dict.fromkeys(names, 0), **{stage: k + 1 for k, stage in enumerate(STAGES)}}
    for i, (before, after) in enumerate(deps):
        if rank[before] >= rank[after]:
            raise InstanceFormatError(source, f"{before!r} before {after!r} contradicts the model's order (components, "
                                      f"then {', then '.join(STAGES)})", field=f"dependencies[{i}]")


def _check_no_cycle(deps: list[list[str]], source: str) -> None:
    """No chain of ``[before, after]`` pairs leads back to where it started."""
    order: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for before, after in deps:
        order.add(after, before)
    try:
        order.prepare()
    except graphlib.CycleError as exc:
        loop = exc.args[1]
        raise InstanceFormatError(source, f"the pairs form a cycle: {' -> '.join(loop)}", field="dependencies") from None


def _disruptions(raw: Any, names: list[str], first_arrival: int, source: str) -> list[Any]:
    """Upstream's ``disruption_scenarios`` with the days they lack filled in."""
    if not isinstance(raw, list):
        raise InstanceFormatError(source, "expected a list", field="disruption_scenarios")
    out: list[Any] = []
    for i, d in enumerate(raw):
        at = f"disruption_scenarios[{i}]"
        if not isinstance(d, dict):
            raise InstanceFormatError(source, "expected an object", field=at)
        kind = d.get("type")
        if kind == "resource_shortage":
            comp = _name(d.get("component"), source, f"{at}.component")
            if comp not in names:
                raise InstanceFormatError(source, f"{comp!r} is not one of the components", field=f"{at}.component")
            share = _number(d.get("shortage"), source, f"{at}.shortage", low=1e-9)
            if share > 1:
                raise InstanceFormatError(source, f"expected a fraction in (0, 1], got {share!r}", field=f"{at}.shortage")
            out.append(Shortage(component=comp, shortage=share, start=0))
            _fill(source, f"{at} has no day; the {comp} shortage strikes every supplier from day 0 to the end")
        elif kind == "machine_breakdown":
            fac = _name(d.get("facility"), source, f"{at}.facility")
            if fac not in STAGES:
                raise InstanceFormatError(source, f"unknown facility {fac!r}", field=f"{at}.facility")
            days = int(_number(d.get("duration"), source, f"{at}.duration", whole=True, low=1))
            out.append(Breakdown(facility=fac, start=first_arrival, duration=days))
            _fill(source, f"{at} has no day; the {fac} breakdown starts on day {first_arrival}, "
                          "when the first order can arrive")
        else:
            raise InstanceFormatError(source, f"unknown disruption type {kind!r}; known: resource_shortage, "
                                              "machine_breakdown", field=f"{at}.type")
    return out


#: The shipped P10 files, crab_gym's JSON and upstream's: one loader for all of them.
FILES = InstanceFiles("P10", P10Instance, INSTANCE_DIR, from_upstream_p10, "GPU supply chain (P10)")


def shipped_p10_names() -> list[str]:
    """Names of the shipped P10 instances, sorted."""
    return FILES.names()


def load_p10(instance: str | Path | dict | P10Instance) -> P10Instance:
    """A P10 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return FILES.load(instance)
