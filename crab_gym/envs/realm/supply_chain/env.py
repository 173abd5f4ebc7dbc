"""Realm-P10-v0: the global GPU supply chain with shortages and breakdowns (REALM-Bench P10),
as the Gymnasium env :class:`SupplyChainEnv`; its docstring is the env's reference.

This module does not use ``from __future__ import annotations``: the action signatures are
built inside a function with ``Literal`` types that pydantic must resolve.
"""

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import ConfigDict, Field, create_model

from crab_gym.core.action import Action
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.realm.common.coordination import savings_share
from crab_gym.envs.realm.common.disruption_env import DisruptedRealmEnv
from crab_gym.envs.realm.common.disruptions import DisruptionReport, disruption_report
from crab_gym.envs.realm.common.env import RealmEnv, checked_init
from crab_gym.envs.realm.common.instance_source import InstanceSource, SizedGenerator, files_kind
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.supply_chain import oracle
from crab_gym.envs.realm.supply_chain.checker import check, check_plan
from crab_gym.envs.realm.supply_chain.coordination import solo_cost
from crab_gym.envs.realm.supply_chain.disruptions import DISRUPTION_KINDS, disruption_to_json, parse_disruption
from crab_gym.envs.realm.supply_chain.formats import FILES, load_p10
from crab_gym.envs.realm.supply_chain.generator import generate_p10
from crab_gym.envs.realm.supply_chain.model import MAX_DAYS, STAGES, Breakdown, P10Instance, Shortage
from crab_gym.envs.realm.supply_chain.plans import DayPlan, carry_out, check_against_known, parse_plan
from crab_gym.envs.realm.supply_chain.references import reference_p10
from crab_gym.envs.realm.supply_chain.render import VIEWER
from crab_gym.envs.realm.supply_chain.sim import PACKAGING, PlanError, SupplySim

DEFAULT_INSTANCE = "p10_small_00"

#: The quantities one ``order`` or ``produce`` step may move (repeat a step to add more).
LEVELS: tuple[int, ...] = (1, 5, 10, 50, 100, 500)

#: Upper bound of every amount (units, money) in the observation.
MAX_AMOUNT = 1e12

#: The ``instance`` and ``generator`` arguments: shipped or own files, or drawn supply chains.
SOURCE = InstanceSource(files_kind(FILES), load_p10,
                        SizedGenerator(generate_p10, {"n_components": 2, "n_suppliers": 2, "n_days": 8}, "p10"),
                        DEFAULT_INSTANCE)


def _amounts(values: Any) -> np.ndarray:
    """Amounts as float32 in [0, MAX_AMOUNT] (the observation's bounds; ``np.clip``'s values
    without its per-call overhead: ten such arrays are built on every step)."""
    return np.minimum(np.maximum(np.asarray(values, dtype=np.float32), 0), MAX_AMOUNT)


def _make_actions(inst: P10Instance, max_quantity: int) -> list[Action]:
    """``order``, ``produce`` and ``next_day`` (finite, masked) and ``submit_plan``."""
    Comp = Literal[tuple(inst.component_names)]  # type: ignore[valid-type]
    Sup = Literal[tuple(inst.supplier_ids)]  # type: ignore[valid-type]
    Stage = Literal[STAGES]  # type: ignore[valid-type]
    Level = Literal[LEVELS]  # type: ignore[valid-type]
    Day = (int, Field(ge=0, le=inst.end_day, description="day (0 = the first planning day)"))
    Qty = (int, Field(ge=1, le=max_quantity, description="units"))
    strict = ConfigDict(extra="forbid")
    OrderEntry = create_model("OrderEntry", __config__=strict, component=(Comp, ...), supplier=(Sup, ...),
                              quantity=Qty, day=Day)
    RunEntry = create_model("ProductionEntry", __config__=strict, facility=(Stage, ...), day=Day, quantity=Qty)
    entries = 4 * len(inst.components) * len(inst.suppliers) * inst.n_days
    plan_params = create_model(
        "SubmitPlanParameters", __config__=strict,
        orders=(list[OrderEntry], Field(default_factory=list, max_length=entries,  # type: ignore[valid-type]
                                        description="orders: component, supplier, quantity, day placed")),
        production=(list[RunEntry], Field(default_factory=list, max_length=entries,  # type: ignore[valid-type]
                                          description="production runs: facility, day, quantity")),
    )

    def order(component: Comp, supplier: Sup, quantity: Level, env: Any) -> None:
        """Order units of a component from a supplier today (paid now; it arrives after the
        supplier's lead time).

        Args:
            component: the component to buy.
            supplier: the supplier to buy it from.
            quantity: units to order.
        """
        env._order(component, supplier, quantity)

    def produce(facility: Stage, quantity: Level, env: Any) -> None:
        """Make units at a production stage today: assembly uses components on hand, testing
        and packaging use what the previous stage finished on earlier days.

        Args:
            facility: the stage.
            quantity: units to make.
        """
        env._produce(facility, quantity)

    def next_day(env: Any) -> None:
        """End the day: today's output moves on, holding is charged, the next day begins."""
        env._next_day()

    def submit_plan(orders: Any, production: Any, env: Any) -> None:
        env._submit()

    kept = {"kept_params": ("env",), "required_kept": ("env",)}
    return [
        Action.from_function(order, env_name="realm-p10"),
        Action.from_function(produce, env_name="realm-p10"),
        Action.from_function(next_day, env_name="realm-p10"),
        Action("submit_plan", submit_plan, plan_params, env_name="realm-p10", description=(
            "Submit the plan from today to the plan's last day: orders [{component, supplier, quantity, day}] and "
            "production [{facility, day, quantity}]. Entries dated before today are skipped. It runs to the "
            "last day, or pauses when a disruption strikes (then submit again)."), **kept),
    ]


def _kept_cost(state: SupplySim, plan: dict[str, Any]) -> float | None:
    """The cost of carrying ``plan`` (``submit_plan`` arguments; ``{}``: nothing more) out
    unchanged from ``state`` to the end, facing what strikes later; None if it breaks a
    hard constraint on the way (a shortage may cut an order it holds)."""
    sim = state.copy()
    try:
        carry_out(sim, parse_plan(sim, plan.get("orders", []), plan.get("production", [])), pause=False)
    except PlanError:
        return None
    return float(sim.cost())


#: Sub-goals: a tenth more of the demand packaged each (``packaged_10pct`` .. ``packaged_100pct``).
TENTHS = tuple(range(1, 11))


def _packaged(tenths: int) -> Evaluator:
    """``packaged_<10 x tenths>pct``: at least ``tenths`` tenths of the demand packaged (GPUs
    delivered, late ones included: a sub-goal is defined on the problem, not on a plan)."""
    return evaluator(lambda env: 10 * env.sim.through(PACKAGING) >= tenths * env.sim.inst.demand,
                     name=f"packaged_{10 * tenths}pct",
                     description=f"at least {10 * tenths} % of the demand packaged")


def _unavoidable(inst: P10Instance, value: float) -> float:
    """The shortfall penalties the adaptation yardstick (of cost ``value``) pays: GPUs it
    could not deliver from the state at the first strike, which no continuation avoids. The
    penalty exceeds anything else a plan can cost (:attr:`P10Instance.cost_ceiling`), so a
    yardstick short of ``k`` GPUs costs ``k`` penalties and less than one more:
    ``k = value // penalty``. With a penalty of one's own at or below the ceiling ``k``
    cannot be read off the cost, and nothing is left out (the plain ratio)."""
    penalty = inst.shortfall_penalty
    if penalty <= max(0, inst.cost_ceiling):
        return 0.0
    return float(penalty * (int(value) // penalty))


def _adaptation_score(value: float, cost: float, baseline: float, unavoidable: float = 0.0) -> float:
    """The ratio ``R / cost`` of the avoidable parts (each cost less ``unavoidable``, the
    shortfall penalties the yardstick ``value`` = R pays, :func:`_unavoidable`) rescaled so
    that ``baseline`` (doing nothing more from the state when the first disruption struck)
    scores 0 and R 1: with ``r = R - u``, ``c = cost - u``, ``b = baseline - u``,
    ``(r/c - r/b) / (1 - r/b)``, clipped to [0, 1]. Leaving the unavoidable part out keeps an
    agent from profiting by spoiling the state before the strike: penalties nobody can avoid
    any more would otherwise raise ``R / cost`` towards 1 (issue 36: holding the first
    component back on ``p10_small_01``). With nothing to gain (``baseline <= value``): 1 at
    or below ``value``, else 0."""
    if cost <= value:
        return 1.0
    if baseline <= value:
        return 0.0
    r, c, b = value - unavoidable, cost - unavoidable, baseline - unavoidable
    return max(0.0, min(1.0, (r / c - r / b) / (1.0 - r / b)))


class SupplyChainEnv(DisruptedRealmEnv):
    """Plan a GPU maker's purchases and production so that the demand is packaged by the due
    day, within budget, at least cost, while shortages and breakdowns strike (REALM-Bench P10).

    ## Description

    Time is in **days** (day 0 .. ``end_day``: the GPUs are due on ``due_day``, late ones may
    be packaged until the ``horizon``); money in currency units; quantities in units.
    ``docs/supply_chain.md`` tells the model at length, :mod:`crab_gym.envs.realm.supply_chain.model`
    holds the instance type.

    | part | model |
    |---|---|
    | decision | orders per (component, supplier, day, quantity); production per (facility, day, quantity) |
    | hard constraints | supplier capacity per component and day (cut by shortages); an order arrives ``lead_time`` days after it is placed, by the horizon and by its component's deadline if that is hard; components and work in progress balance (assembly uses ``bom`` units of each component on hand per GPU; testing, then packaging, use what the previous stage finished on an earlier day); facility capacity per day (0 while broken down); purchases + production within the budget; at most the demand packaged |
    | objective | minimise purchases + production + holding (per unit on hand or in progress at the end of each day) + lateness (``lateness_penalty`` per GPU per day packaged after the due day; a component's ``late_penalty`` per unit per day arriving after its soft deadline) + ``shortfall_penalty`` per GPU not packaged by the horizon |
    | feasible | every hard constraint. A GPU not packaged by the horizon is no infeasibility but costs ``shortfall_penalty`` (generated and upstream instances: above anything else a plan can cost, so a plan delivering fewer GPUs always costs more; see ``docs/supply_chain.md``); success needs every GPU delivered |

    Disruptions (``resource_shortage``: a component's supplier capacity cut by a share;
    ``machine_breakdown``: a stage stops for some days) strike at the start of their day; the
    agent learns of one when it strikes. The env implements the disruption protocol
    (:mod:`crab_gym.envs.realm.common.disruptions`), so ``DisruptionWrapper`` can add more.

    ## Action Space

    A ``OneOf`` over one ``Dict`` per action; ``env.step`` also takes a tool call
    ``{"name": ..., "arguments": {...}}``. Levels are the quantities ``1, 5, 10, 50, 100, 500``.

    | action | arguments | effect |
    |---|---|---|
    | ``order`` | ``component``, ``supplier``, ``quantity`` (a level) | buy now; arrives after the lead time |
    | ``produce`` | ``facility`` (``assembly``/``testing``/``packaging``), ``quantity`` (a level) | make units today |
    | ``next_day`` | none | end the day |
    | ``submit_plan`` | ``orders`` [{component, supplier, quantity, day}], ``production`` [{facility, day, quantity}] | carry the plan out to the last day; pauses when a disruption strikes while entries remain (``info["paused"]``, ``info["pending_plan"]``); entries before today are skipped, so the same plan may be submitted again. A plan that breaks a hard constraint with what is known now is invalid (nothing changes) |

    ``action_masks()`` (also ``obs["action_mask"]``) allows an ``order`` or ``produce`` only
    when it keeps every hard constraint *and* can still help: an order arriving too late to
    be assembled, tested and packaged by the last day, or beyond what the demand still needs,
    is masked, as is a run beyond the demand or too late for packaging. ``next_day`` is
    always allowed. When nothing but ``next_day`` is allowed the env ends days by itself
    (``info["events"]`` says so), so an episode has about as many steps as decisions.

    ## Observation Space

    A ``Dict`` (``C`` components, ``S`` suppliers, ``T`` = ``end_day + 1`` days):

    | key | space | meaning |
    |---|---|---|
    | ``day`` | ``Box(0, 400, (1,))`` | today |
    | ``budget_left``, ``demand_left`` | ``Box(0, 1e12, (1,))`` | budget not spent; GPUs not yet packaged |
    | ``on_hand`` | ``Box(0, 1e12, (C,))`` | components on hand |
    | ``stage_stock`` | ``Box(0, 1e12, (3,))`` | assembled awaiting testing, tested awaiting packaging, packaged |
    | ``made_today`` | ``Box(0, 1e12, (3,))`` | each stage's output today |
    | ``arrivals`` | ``Box(0, 1e12, (C, T))`` | units arriving on each day |
    | ``supplier_left`` | ``Box(0, 1e12, (S, C))`` | units each supplier still sells today |
    | ``facility_left`` | ``Box(0, 1e12, (3,))`` | units each stage can still make today |
    | ``price`` | ``Box(0, 1e12, (S, C))`` | unit prices |
    | ``lead_time`` | ``Box(0, 400, (S,))`` | days from order to arrival |
    | ``shortage`` | ``MultiBinary((S, C))`` | a shortage in force today |
    | ``breakdown`` | ``MultiBinary(3)`` | a stage broken down today |
    | ``action_mask`` | ``MultiBinary(n_flat)`` | ``action_masks()`` |

    ## Rewards

    ``progress_weight`` (0.5) x the rise of the sub-goal completeness (``packaged_10pct`` ->
    ``packaged_20pct`` -> ... -> ``packaged_100pct``: a tenth more of the demand packaged
    each, late GPUs included); at the end ``optimality_weight`` (0.5) x optimality =
    reference cost / cost (capped at 1; 0 if infeasible). An invalid action changes nothing,
    earns ``-invalid_action_penalty`` and says why in ``info["error"]``. A return lies in [0, 1].

    ## Starting State

    Day 0 with the instance's initial stock, nothing ordered; disruptions of day 0 have struck.
    ``reset(options={"instance": ...})`` swaps in another instance of the same shape (names
    and days); with a ``generator`` every reset draws a fresh one seeded by ``reset(seed=...)``.

    ## Episode End

    Terminates when the last day (``end_day``) ends (by ``next_day``, by the env ending idle days, or by a
    plan). Never truncates. Every step's ``info`` has ``day``, ``spent``, ``events``,
    ``disruptions`` (struck during the step), ``active_disruptions``, ``paused`` and
    ``pending_plan``. At the end ``info["metrics"]`` holds ``planning_quality`` (share of the
    demand packaged), ``optimality``, ``constraint_satisfaction`` (share of the 8 declared
    constraints met, from the independent checker), ``coordination`` (the share of the
    gain of keeping the flow together realised: ``(solo_cost - cost) / (solo_cost -
    reference)`` clipped to [0, 1]; 0 if infeasible or no cheaper than ``solo_cost``, the
    push chain where every supplier and stage acts alone as soon as it can; see
    :mod:`.coordination`), ``adaptation`` (see below), ``cost``, ``reference_cost``,
    ``solo_cost``, ``adaptive_oracle_cost`` (the adaptive oracle's episode, which learns
    of each disruption when it strikes), ``adaptation_reference_cost``, the cost by kind (``lateness`` included), ``delivered``, ``shortfall``,
    ``violations`` and ``disruptions_applied``; ``info["solution"]`` holds
    ``{"orders": [{"component", "supplier", "quantity", "day", "cost", "eta"}], "production":
    [{"facility", "day", "quantity", "cost"}], "disruptions": [...]}`` (REALM's
    ``{"orders": [{"component", "cost", "eta"}]}`` plus the rest).

    The reference (:attr:`reference`) is the best plan known facing this episode's
    disruptions: the CP-SAT optimum with foresight of all of them, proven optimal
    (precomputed for shipped instances facing their own disruptions; otherwise solved after
    the episode by ``finish_metrics()``, or inside its last ``step()`` with
    ``reference_solve="inline"``, and cached). ``OraclePolicy`` submits its plan, which pauses at each
    disruption and resumes when submitted again: it scores 1. ``adaptation`` measures the
    cost against the better of the oracle taking over from the episode's own state when the
    first disruption struck (at the start of that day, re-solving at later strikes, never
    seeing one coming) and keeping the plan the agent was following then, on a ratio scale
    where doing nothing more from that state scores 0 and that reference 1; 0 if
    infeasible; None (not applicable) if no disruption struck. The ratio leaves out the
    shortfall penalties the reference pays (GPUs nobody can deliver any more), so spoiling
    the state before the strike does not raise the score by itself.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``instance`` | ``"p10_small_00"`` | a shipped name (``p10_small_00`` ... ``p10_large_05``), a path to a JSON file (crab_gym's or an upstream REALM-Bench P10 file), a mapping, or a ``P10Instance`` |
    | ``generator`` | ``None`` | draw a fresh instance on every reset: ``{"n_components": 2, "n_suppliers": 2, "n_days": 8, "size": "small"}``; or your own callable ``generator(rng) -> instance`` (as in Jumanji), whose draws must fit the env's spaces |
    | ``adaptation_reference`` | ``"deferred"`` | ``"deferred"`` (default): the same re-solve, run by ``finish_metrics()`` after the episode (the evaluation runner calls it; the last ``info["metrics"]`` says ``adaptation_pending``), never inside ``step()``; ``"resolve"``: the better of re-solving and keeping the plan from the episode's state at its first disruption, inside the last ``step()``; ``"oracle"``: the adaptive oracle's value from day 0 (``reference.extra["adaptive_value"]``; no solve at the end) |
    | ``reference`` | ``None`` | a known reference cost instead of the shipped, cached or solved one |
    | ``reference_solve`` | ``"deferred"`` | ``"deferred"``: an instance nobody shipped (generated, your file, a schedule changed by an injected disruption) is not solved inside ``step()``; ``finish_metrics()`` solves it after the episode (the evaluation runner calls it; until then the metrics say ``optimality_pending`` and the last reward's optimality term is 0: ``deferred_reward()`` gives that term after the episode, and the runner adds it to the return); ``"inline"``: solved inside the last ``step()`` |
    | ``render_mode`` | ``None`` | ``"ansi"`` or ``"rgb_array"`` (stacked inventory and production per day, budget line, disruption spans) |
    | ``invalid_action_penalty``, ``progress_weight``, ``optimality_weight`` | ``0.0``, ``0.5``, ``0.5`` | reward weights |

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    #: Each supplier and each facility is an agent (``crab_gym.parallel_env``); when all pass, the day ends.
    agent_arguments = ("supplier", "facility")
    #: The mask cache is derived from the state, not state (the contract test skips it).
    transient_attributes = (*RealmEnv.transient_attributes, "_mask_cache")
    instance_source = SOURCE
    viewer = VIEWER
    checker = staticmethod(check)
    #: The disruption types this env knows (the disruption protocol).
    disruption_kinds = DISRUPTION_KINDS
    disruption_parser = staticmethod(parse_disruption)
    disruption_json = staticmethod(disruption_to_json)
    faced_reference = staticmethod(reference_p10)

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | P10Instance = DEFAULT_INSTANCE, *, generator: dict | Callable[..., Any] | None = None,
        adaptation_reference: Literal["deferred", "resolve", "oracle"] = "deferred", **options: Any,
    ) -> None:
        self._init_disruptions(adaptation_reference)
        self._generator, inst = self.instance_source.start(instance, generator)
        self._max_quantity = max(1, 4 * max(inst.need(c) for c in range(len(inst.components))))
        super().__init__(_make_actions(inst, self._max_quantity), **options)
        C, S, T = len(inst.components), len(inst.suppliers), inst.n_days
        amount = lambda *shape: spaces.Box(0.0, MAX_AMOUNT, shape, np.float32)  # noqa: E731
        self.observation_space = spaces.Dict({
            "day": spaces.Box(0.0, float(MAX_DAYS), (1,), np.float32),
            "budget_left": amount(1), "demand_left": amount(1),
            "on_hand": amount(C), "stage_stock": amount(3), "made_today": amount(3),
            "arrivals": amount(C, T), "supplier_left": amount(S, C), "facility_left": amount(3),
            "price": amount(S, C), "lead_time": spaces.Box(0.0, float(MAX_DAYS), (S,), np.float32),
            "shortage": spaces.MultiBinary((S, C)), "breakdown": spaces.MultiBinary(3),
            "action_mask": spaces.MultiBinary(self.codec.n_flat),
        })
        self._flat_order = {(c, s, q): self.codec.call_to_flat({"name": "order", "arguments": {
            "component": cn, "supplier": sn, "quantity": q}})
            for c, cn in enumerate(inst.component_names) for s, sn in enumerate(inst.supplier_ids) for q in LEVELS}
        self._flat_produce = {(k, q): self.codec.call_to_flat({"name": "produce", "arguments": {
            "facility": stage, "quantity": q}}) for k, stage in enumerate(STAGES) for q in LEVELS}
        self._flat_next = self.codec.call_to_flat({"name": "next_day", "arguments": {}})
        self._mask_cache: tuple[Any, np.ndarray] | None = None
        self._use_instance(inst)

    # ================================================================== RealmEnv hooks
    def _check_fits(self, inst: P10Instance) -> None:
        cur = self.instance
        if ((inst.component_names, inst.supplier_ids, inst.end_day) != (cur.component_names, cur.supplier_ids, cur.end_day)
                or max(inst.need(c) for c in range(len(inst.components))) * 4 > self._max_quantity):
            raise ValueError(
                f"instance {inst.name} does not fit this env (made for {cur.name}): an instance swapped in at "
                "reset needs the same components, suppliers and last day, and no larger demand; make a new env for it"
            )

    @property
    def instance(self) -> P10Instance:
        """The current instance (held once, by the simulation)."""
        return self.sim.inst

    def _use_instance(self, inst: P10Instance) -> None:
        self.sim = SupplySim(inst)
        self._goals = [_packaged(k) for k in TENTHS]
        self._obs_static = {"price": _amounts(inst.prices), "lead_time": _amounts([s.lead_time for s in inst.suppliers])}
        self._restart()

    def _restart(self) -> None:
        self._clear_disruptions()
        self._events: list[str] = []
        self.sim = SupplySim(self.instance)
        self._note_struck(list(self.sim.fired))
        self._settle()

    def _agent_cost(self) -> float:
        return float(self.sim.cost())

    def _plan_feasible(self) -> bool:
        return self._check().feasible

    # ================================================================== CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        return self._instance_graph(self._new_graph)

    def _new_graph(self) -> nx.DiGraph:
        """A chain ``packaged_10pct`` -> ... -> ``packaged_100pct``."""
        g = nx.DiGraph()
        g.add_nodes_from(self._goals)
        g.add_edges_from(zip(self._goals, self._goals[1:]))
        return g

    def _get_obs(self) -> dict[str, Any]:
        sim, inst = self.sim, self.instance
        C, S = len(inst.components), len(inst.suppliers)
        arrivals = np.zeros((C, inst.n_days), dtype=np.float32)
        for t, c, q in sim.in_transit():
            arrivals[c, min(t, inst.end_day)] += q
        shortage = np.zeros((S, C), dtype=np.int8)
        breakdown = np.zeros(3, dtype=np.int8)
        for d in self._active_disruptions():
            if isinstance(d, Shortage):
                c = inst.component_names.index(d.component)
                for s, sid in enumerate(inst.supplier_ids):
                    if d.supplier in (None, sid):
                        shortage[s, c] = 1
            else:
                breakdown[STAGES.index(d.facility)] = 1
        amounts = _amounts([  # one array for every amount (each entry a view of it)
            sim.day, max(0, sim.budget_left()), max(0, sim.shortfall()), *sim.on_hand,
            sim.stock[0], sim.stock[1], sim.delivered, *sim.made_today,
            *[sim.supplier_left(s, c) for s in range(S) for c in range(C)], *[sim.facility_left(k) for k in range(3)],
        ])
        at = 6 + C  # day, budget, demand, on hand (C), stage stock (3)
        return {
            "day": amounts[0:1],
            "budget_left": amounts[1:2],
            "demand_left": amounts[2:3],
            "on_hand": amounts[3:3 + C],
            "stage_stock": amounts[3 + C:at],
            "made_today": amounts[at:at + 3],
            "arrivals": arrivals,
            "supplier_left": amounts[at + 3:at + 3 + S * C].reshape(S, C),
            "facility_left": amounts[at + 3 + S * C:],
            "price": self._obs_static["price"].copy(),
            "lead_time": self._obs_static["lead_time"].copy(),
            "shortage": shortage,
            "breakdown": breakdown,
            "action_mask": self.action_masks().astype(np.int8),
        }

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        sim, inst = self.sim, self.instance
        if name == "next_day":
            return None
        if name == "order":
            c, s = inst.component_names.index(args["component"]), inst.supplier_ids.index(args["supplier"])
            left, why = sim.order_useful(c, s)
            if args["quantity"] <= left:
                return None
            price = max(1, inst.prices[s][c])
            return why or (f"at most {left} {args['component']} from {args['supplier']} can help today, not "
                           f"{args['quantity']}: it sells {sim.supplier_left(s, c)} more today, the budget left pays "
                           f"{sim.budget_left() // price}, the demand still needs {sim.still_needed(c)}")
        if name == "produce":
            k = STAGES.index(args["facility"])
            left, why = sim.produce_useful(k)
            if args["quantity"] <= left:
                return None
            return why or (f"{args['facility']} can usefully make at most {left} today, not {args['quantity']} "
                           f"(capacity left today: {sim.facility_left(k)})")
        orders = [o.model_dump() for o in args["orders"]]
        production = [r.model_dump() for r in args["production"]]
        plan = parse_plan(sim, orders, production)
        reason = check_against_known(sim, plan)
        if reason is None:
            self._pending = plan
        return reason

    def _action_mask(self) -> np.ndarray:
        sim = self.sim
        key = sim.state_key()
        if self._mask_cache is not None and self._mask_cache[0] == key:
            return self._mask_cache[1].copy()
        mask = self._compute_mask()
        self._mask_cache = (key, mask)
        return mask.copy()

    def _compute_mask(self) -> np.ndarray:
        sim = self.sim
        mask = np.zeros(self.codec.n_flat, dtype=bool)
        if sim.done:
            return mask
        mask[self._flat_next] = True
        coming = sim.coming()  # once, not per component-supplier pair
        for c in range(len(self.instance.components)):
            for s in range(len(self.instance.suppliers)):
                left = sim.order_room(c, s, coming)
                for q in LEVELS:
                    if q <= left:
                        mask[self._flat_order[c, s, q]] = True
        for k in range(len(STAGES)):
            left = sim.produce_useful(k)[0]
            for q in LEVELS:
                if q <= left:
                    mask[self._flat_produce[k, q]] = True
        return mask

    def _is_terminated(self) -> bool:
        return self.sim.done

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self._metrics(), self._solution()

    def _extra_info(self) -> dict[str, Any]:
        events, self._events = self._events, []
        return {"day": int(self.sim.day), "spent": int(self.sim.spent), "events": events, **self._fired_info(),
                **self._pause_info()}

    # ================================================================== action entries
    def _order(self, component: str, supplier: str, quantity: int) -> None:
        inst = self.instance
        o = self.sim.order(inst.component_names.index(component), inst.supplier_ids.index(supplier), quantity)
        self._events.append(f"day {o.day}: ordered {quantity} {component} from {supplier} for {o.cost}, "
                            f"arriving day {o.eta}")
        self._unpause()
        self._settle()

    def _produce(self, facility: str, quantity: int) -> None:
        run = self.sim.produce(STAGES.index(facility), quantity)
        self._events.append(f"day {run.day}: {facility} makes {quantity} for {run.cost}")
        self._unpause()
        self._settle()

    def _next_day(self) -> None:
        self._end_day()
        self._unpause()
        self._settle()

    def _submit(self) -> None:
        plan, self._pending = self._pending, None
        if not isinstance(plan, DayPlan):
            raise RuntimeError("submit_plan runs through env.step(), which checks the plan first")
        struck = carry_out(self.sim, plan, on_strike=lambda _: self._archive(plan.as_arguments(self.sim, self.sim.day)))
        self._note_struck(struck)
        self._paused = not self.sim.done and bool(struck) and plan.left_after(self.sim.day)
        if self._paused:
            self._pending_plan = plan.as_arguments(self.sim, self.sim.day)
            self._events.append(f"plan paused on day {self.sim.day} by a disruption; submit a plan again")
        else:
            self._pending_plan = {}
            self._events.append("plan carried out to the last day")
        self._settle()

    def _end_day(self) -> None:
        day = self.sim.day
        struck = self.sim.next_day()
        self._events.append(f"day {day} ended" + ("; the plan is over" if self.sim.done else ""))
        self._note_struck(struck)

    def _settle(self) -> None:
        """End days by themselves while nothing but ``next_day`` is allowed."""
        while not self.sim.done and not self._action_mask().sum() > 1:
            self._end_day()

    def _note_struck(self, struck: list[Any]) -> None:
        self._note_fired(struck)
        if struck:
            self._archive(self._pending_plan)

    def _archive(self, kept_plan: dict[str, Any]) -> None:
        """The snapshot: the state as the first disruption strikes (at the start of its day,
        before any decision of that day), pickled -- an archive no later move can change --
        with the rest of the plan the agent was following (``{}``: none)."""
        self._take_snapshot(lambda: pickle.dumps(self.sim), dict(kept_plan))

    def _fired_event(self, d: Shortage | Breakdown) -> str:
        return f"disruption on day {d.start}: {d.describe()}"

    def _active_disruptions(self) -> list[Shortage | Breakdown]:
        return [d for d in self.sim.fired if d.active(self.sim.day)]

    # ================================================================== disruption protocol
    def _disruption_clock(self) -> int | None:
        return None if self.sim.done else self.sim.day

    def _schedule_disruption(self, d: Shortage | Breakdown, now: int) -> Shortage | Breakdown:
        """On the simulation's calendar: it strikes when its day begins (now if that day has
        come; tomorrow if today's decisions have begun, so none of them breaks it)."""
        return self.sim.schedule_disruption(d)

    def _inject(self, d: Shortage | Breakdown, now: int) -> DisruptionReport:
        struck = self.sim.fire(self.sim.clock.due())
        self._note_struck(struck)
        applied = bool(struck)
        msg = f"applied on day {now}: {d.describe()}" if applied else \
            f"scheduled: {d.describe()} (strikes when day {d.start} begins)"
        if not applied:
            self._events.append(msg)
        return disruption_report(applied, now, msg, self.disruption_json(d))

    def disruption_targets(self) -> dict[str, Any]:
        """Where disruptions may strike: ``locations`` (components and stages: a shortage
        strikes a component, a breakdown a stage), no routes, and the ``window`` of start days
        ``(0, end_day)``."""
        inst = self.instance
        return {"routes": [], "locations": [*inst.component_names, *STAGES], "window": (0, inst.end_day),
                "locations_by_kind": {"resource_shortage": list(inst.component_names), "machine_breakdown": list(STAGES)}}

    # ================================================================== results
    def _check(self) -> Any:
        """The independent checker's verdict on the plan so far, once per plan (the reward,
        the feasibility and the metrics of an episode's end all ask for it; orders, runs and
        disruptions are only ever appended)."""
        sim = self.sim
        key = (sim, len(sim.orders), len(sim.runs), len(sim.fired))
        known = self._cache.get("verdict")
        if known is None or known[0][0] is not sim or known[0][1:] != key[1:]:
            known = self._cache["verdict"] = (key, check_plan(self.instance, sim.fired, oracle.plan_arguments(sim)))
        return known[1]

    def _solution(self) -> dict[str, Any]:
        sim, inst = self.sim, self.instance
        return {
            "orders": [{"component": inst.component_names[o.c], "supplier": inst.supplier_ids[o.s],
                        "quantity": o.quantity, "day": o.day, "cost": o.cost, "eta": o.eta} for o in sim.orders],
            "production": [{"facility": STAGES[r.k], "day": r.day, "quantity": r.quantity, "cost": r.cost}
                           for r in sim.runs],
            "disruptions": [disruption_to_json(d) for d in sim.fired],
        }

    def _metrics(self) -> dict[str, Any]:
        sim, inst, ref = self.sim, self.instance, self.reference
        verdict = self._check()
        cost = float(sim.cost())
        solo = self.yardstick.memo("solo", lambda: solo_cost(inst, sim.fired), *sim.fired)
        adaptation, adapt_ref = self._adaptation(cost, verdict.feasible)
        return {
            "planning_quality": verdict.metrics["planning_quality"],
            "optimality": self._optimality(),
            "constraint_satisfaction": verdict.metrics["constraint_satisfaction"],
            "coordination": 0.0 if cost >= solo else savings_share(cost, verdict.feasible, solo, ref.measure),
            "adaptation": adaptation,
            "cost": cost,
            "reference_cost": ref.value,
            "reference_status": ref.status,
            "solo_cost": solo,
            "adaptive_oracle_cost": ref.extra.get("adaptive_value"),
            "adaptation_reference_cost": adapt_ref,
            "purchase": sim.purchase, "production": sim.production, "holding": sim.holding,
            "lateness": sim.lateness,
            "delivered": sim.delivered, "demand": inst.demand, "shortfall": sim.shortfall(),
            "budget": inst.budget, "spent": sim.spent,
            "feasible": verdict.feasible,
            "violations": verdict.violations,
            "disruptions_applied": len(sim.fired),
        }

    def _adaptation(self, cost: float, feasible: bool) -> tuple[float | None, float | None]:
        """``(adaptation, its reference cost)``: the cost against the better of the oracle
        taking over from the state when the first disruption struck and keeping the plan the
        agent was following then, on a ratio scale of the avoidable costs (the yardstick's
        shortfall penalties left out) where doing nothing more from that state scores 0
        (:func:`_adaptation_score`). Not applicable (None) when no disruption struck;
        0 for an infeasible plan (no solve then)."""
        if self._snapshot is not None and not feasible:
            return 0.0, None

        def score(value: float) -> float:
            baseline = self._restored_snapshot()
            baseline.run_to_end()  # doing nothing more
            return _adaptation_score(value, cost, float(baseline.cost()), _unavoidable(self.instance, value))

        return self._measure_adaptation(score)

    def _restored_snapshot(self) -> SupplySim:
        """The state when the first disruption struck, facing those injected after it."""
        snapshot: SupplySim = pickle.loads(self._snapshot)  # noqa: S301 - bytes this env wrote
        for d in self._injected_after_snapshot:
            snapshot.schedule_disruption(d)
        return snapshot

    def _stored_adaptation_value(self) -> float:
        ref = self.reference
        return float(ref.extra.get("adaptive_value", ref.value))

    def _resolve_adaptation(self) -> float:
        """The better of the oracle re-solving from the snapshot and keeping the plan."""
        snapshot = self._restored_snapshot()
        value = float(oracle.adaptive(snapshot).sim.cost())
        kept = _kept_cost(snapshot, self._snapshot_keep)
        return value if kept is None else min(value, kept)

