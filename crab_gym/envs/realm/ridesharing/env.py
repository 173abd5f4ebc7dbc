"""Realm-P3-v0: urban ride-sharing (a dial-a-ride problem) as a Gymnasium env.

**Model** (units: minutes; clock times are minutes from midnight).

* *Decision*: which vehicle serves which passenger request, and the order of each vehicle's
  stops ``pickup:<id>`` / ``dropoff:<id>``. A request may be left unserved.
* *Constraints*: a vehicle starts at its place at the instance's ``start_time``, drives to its
  next stop as soon as it has served one, and waits at a pickup until the window opens; the
  pickup happens by the window's close, the dropoff by the request's latest dropoff; the
  dropoff follows the pickup in the same vehicle; the passengers on board never exceed the
  capacity. Travel times are shortest paths over the city's roads.
* *Objective*: minimise total travel minutes + ``unserved_penalty`` per unserved request.

**Acting.** Time moves by events: the vehicles free earliest decide first (the *clock*).

* ``dispatch(vehicle, stop)``: send a vehicle that is free now to its next stop. The action
  mask allows only stops that keep every constraint (with the travel times in force now);
  a vehicle that has passengers but no such stop may drop them late (a violation) rather than
  get stuck.
* ``park(vehicle)``: end an empty vehicle's route (vehicles left with nothing to do park
  themselves).
* ``submit_plan(assignments)``: a whole plan in REALM's solution shape,
  ``{"vehicle1": ["pickup:p1", "dropoff:p1", ...], ...}``; it is driven to the end (vehicles
  not listed, or whose list runs out, park). Unknown or misplaced stops make the call
  invalid; a late stop or an overload is carried out and counted as a violation.

**Observation**: the clock, each vehicle's place, free minute, load, whether it decides now or
has parked; each request's status, vehicle, places and time limits; the travel-time matrix
in force now; the action mask.

**Episode end**: every vehicle parked. ``info["solution"]`` holds the plan; ``info["metrics"]``
holds planning_quality (share of requests served), optimality (reference cost / cost, 0 if
any constraint is broken), constraint_satisfaction (share of the 3 per request + 1 per vehicle
declared constraints met), coordination (share of vehicles that delivered someone), and the
cost figures. The reference is the OR-Tools oracle's value (precomputed for shipped
instances, solved once and cached for others).

``instance``: a shipped name (``p3_small_01`` ...), a path (crab_gym JSON or a user's own
upstream REALM-Bench P3/P4 file, read with ``load_realm_instance``) or a ``P3Instance``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import networkx as nx
import numpy as np
from pydantic import ConfigDict, Field, create_model

from crab_gym.core import Action, evaluator
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.realm.common.env import InstanceKind, RenderModesMixin, checked_init
from crab_gym.envs.realm.common.references import optimality_ratio
from crab_gym.envs.realm.ridesharing import render as rendering
from crab_gym.envs.realm.ridesharing.formats import load_p3, shipped_p3_names
from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.references import p3_reference
from crab_gym.envs.realm.ridesharing.sim import DELIVERED, ONBOARD, WAITING, PlanError, RideSim, hhmm

DEFAULT_INSTANCE = "p3_small_01"

#: What ``instance`` accepts (checked, and explained when wrong).
INSTANCE_KIND = InstanceKind(
    problem="P3",
    types=(P3Instance,),
    names=shipped_p3_names,
    list_all="crab_gym.datasets.list_instances('P3')",
    examples=("p3_small_01", "p3_medium_01", "p3_large_05"),
    files="a path to a JSON file (crab_gym's format or an upstream REALM-Bench P3/P4 file)",
)

#: Upper bound of every minute in the observation (two days).
MAX_MINUTE = 2 * 24 * 60
#: Upper bound of the travel-time matrix in the observation.
MAX_TRAVEL = 10_000


def _dispatch(vehicle: str, stop: str, env: Any) -> None:
    env._act_dispatch(vehicle, stop)


def _park(vehicle: str, env: Any) -> None:
    env._act_park(vehicle)


def _submit_plan(assignments: Any, env: Any) -> None:
    env._act_submit(assignments)


def _usable_field_name(vid: str) -> bool:
    """Vehicle ids become field names of submit_plan's schema."""
    return vid.isidentifier() and not vid.startswith(("_", "model_"))


class RideSharingEnv(RenderModesMixin, CrabEnv):
    """Realm-P3-v0 (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    problem = "p3"

    @checked_init
    def __init__(
        self,
        instance: str | Path | P3Instance | None = None,
        *,
        render_mode: str | None = None,
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
    ) -> None:
        self.instance = self._load(DEFAULT_INSTANCE if instance is None else instance)
        if self.instance.n_requests == 0:
            raise ValueError(f"instance {self.instance.name!r} has no ride requests")
        inst = self.instance
        self.vehicle_ids = [v.vehicle_id for v in inst.vehicles]
        bad = [vid for vid in self.vehicle_ids if not _usable_field_name(vid)]
        if bad:
            raise ValueError(f"vehicle ids must be identifiers for submit_plan's schema, got {bad}")
        self.stop_names = inst.stop_names()
        self._vid = {vid: k for k, vid in enumerate(self.vehicle_ids)}
        self._stop = {s: k for k, s in enumerate(self.stop_names)}
        super().__init__(
            self._make_actions(),
            render_mode=render_mode,
            invalid_action_penalty=invalid_action_penalty,
            progress_weight=progress_weight,
            optimality_weight=optimality_weight,
        )
        R, V, L = inst.n_requests, inst.n_vehicles, len(inst.locations)
        self._dispatch_offset = self.codec.flat_offsets["dispatch"]
        self._park_offset = self.codec.flat_offsets["park"]
        self.observation_space = gym.spaces.Dict(
            {
                "clock": gym.spaces.Box(0, MAX_MINUTE, (1,), np.float32),
                "vehicle_location": gym.spaces.MultiDiscrete([L] * V),
                "vehicle_free_at": gym.spaces.Box(0, MAX_MINUTE, (V,), np.float32),
                "vehicle_load": gym.spaces.Box(0, sum(r.passengers for r in inst.requests), (V,), np.float32),
                "vehicle_capacity": gym.spaces.Box(0, 1000, (V,), np.float32),
                "vehicle_acting": gym.spaces.MultiBinary(V),
                "vehicle_parked": gym.spaces.MultiBinary(V),
                "request_status": gym.spaces.MultiDiscrete([3] * R),
                "request_vehicle": gym.spaces.MultiDiscrete([V + 1] * R),
                "request_places": gym.spaces.MultiDiscrete(np.full((R, 2), L)),
                "request_times": gym.spaces.Box(0, MAX_MINUTE, (R, 3), np.float32),
                "travel_time": gym.spaces.Box(0, MAX_TRAVEL, (L, L), np.float32),
                "action_mask": gym.spaces.MultiBinary(self.codec.n_flat),
            }
        )
        self._pos = rendering.layout(inst)
        self._request_places = np.array(
            [[inst.index[r.pickup], inst.index[r.dropoff]] for r in inst.requests], dtype=np.int64
        )
        self._request_times = np.clip(
            np.array([[*r.pickup_window, r.latest_dropoff] for r in inst.requests], dtype=np.float32), 0, MAX_MINUTE
        )
        self.sim = self._new_sim()
        self._events: list[str] = []
        self._final: tuple[dict, dict] | None = None

    # ================================================================== setup
    @staticmethod
    def _load(instance: Any) -> P3Instance:
        return INSTANCE_KIND.load(instance, load_p3)

    def _schedule(self) -> list[Any]:
        return []

    def _new_sim(self) -> RideSim:
        return RideSim(self.instance, self._schedule())

    def _make_actions(self) -> list[Action]:
        inst = self.instance
        VehicleId = Literal[tuple(self.vehicle_ids)]  # type: ignore[valid-type]
        StopName = Literal[tuple(self.stop_names)]  # type: ignore[valid-type]
        strict = ConfigDict(extra="forbid")
        vdesc = "id of a vehicle that is free now"
        dispatch_params = create_model(
            "DispatchParameters",
            __config__=strict,
            vehicle=(VehicleId, Field(description=vdesc)),
            stop=(StopName, Field(description="its next stop: 'pickup:<passenger>' or 'dropoff:<passenger>'")),
        )
        park_params = create_model(
            "ParkParameters", __config__=strict, vehicle=(VehicleId, Field(description="id of an empty vehicle free now"))
        )
        plan_fields = {
            vid: (
                list[StopName],  # type: ignore[valid-type]
                Field(default_factory=list, max_length=2 * inst.n_requests, description=f"stops of {vid}, in order"),
            )
            for vid in self.vehicle_ids
        }
        Assignments = create_model("Assignments", __config__=strict, **plan_fields)
        plan_params = create_model(
            "SubmitPlanParameters",
            __config__=strict,
            assignments=(Assignments, Field(description="each vehicle's stops in order (REALM solution shape)")),
        )
        kept = {"kept_params": ("env",), "required_kept": ("env",)}
        return [
            Action(
                "dispatch",
                _dispatch,
                dispatch_params,
                description="Send a vehicle that is free now to its next stop (a pickup or a dropoff).",
                **kept,
            ),
            Action("park", _park, park_params, description="End the route of an empty vehicle that is free now.", **kept),
            Action(
                "submit_plan",
                _submit_plan,
                plan_params,
                description=(
                    "Submit the whole plan: for each vehicle its stops in order, e.g. "
                    '{"v1": ["pickup:p1", "dropoff:p1"]}. Vehicles not listed park.'
                ),
                **kept,
            ),
        ]

    # ================================================================== CrabEnv hooks
    def _reset_state(self, options: dict[str, Any] | None) -> None:
        self.sim = self._new_sim()
        self._events = []
        self._final = None
        self._on_reset()
        self._settle()

    def _on_reset(self) -> None:
        """Subclass hook (P4)."""

    def _build_graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for r, req in enumerate(self.instance.requests):
            g.add_edge(self._picked_up(r, req.passenger_id), self._delivered(r, req.passenger_id))
        return g

    @staticmethod
    def _picked_up(r: int, pid: str):
        @evaluator(name=f"picked_up_{pid}", description=f"passenger {pid} picked up within the window")
        def check(env) -> bool:
            return env.sim.status[r] >= ONBOARD and ("window", r) not in env.sim.broken

        return check

    @staticmethod
    def _delivered(r: int, pid: str):
        @evaluator(name=f"delivered_{pid}", description=f"passenger {pid} dropped off in time")
        def check(env) -> bool:
            return env.sim.status[r] == DELIVERED and ("deadline", r) not in env.sim.broken

        return check

    def _get_obs(self) -> dict[str, Any]:
        sim = self.sim
        clock = sim.clock
        acting = set(sim.acting())
        m = sim.matrix()
        return {
            "clock": np.array([min(clock if clock is not None else self._last_time(), MAX_MINUTE)], dtype=np.float32),
            "vehicle_location": np.array([v.loc for v in sim.vehicles], dtype=np.int64),
            "vehicle_free_at": np.array([min(v.free, MAX_MINUTE) for v in sim.vehicles], dtype=np.float32),
            "vehicle_load": np.array([v.load for v in sim.vehicles], dtype=np.float32),
            "vehicle_capacity": np.array([v.capacity for v in sim.vehicles], dtype=np.float32),
            "vehicle_acting": np.array([k in acting for k in range(sim.V)], dtype=np.int8),
            "vehicle_parked": np.array([v.parked for v in sim.vehicles], dtype=np.int8),
            "request_status": np.array(sim.status, dtype=np.int64),
            "request_vehicle": np.array([a + 1 for a in sim.assigned], dtype=np.int64),
            "request_places": self._request_places.copy(),
            "request_times": self._request_times.copy(),
            "travel_time": np.minimum(m, MAX_TRAVEL).astype(np.float32),
            "action_mask": self.action_masks().astype(np.int8),
        }

    def _last_time(self) -> int:
        return max(v.free for v in self.sim.vehicles)

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        sim = self.sim
        if name == "submit_plan":
            try:
                sim.parse_plan(args["assignments"].model_dump())
            except PlanError as exc:
                return str(exc)
            return None
        v = self._vid[args["vehicle"]]
        if v not in sim.acting():
            veh = sim.vehicles[v]
            if veh.parked:
                return f"vehicle {args['vehicle']} has finished its route"
            now = ", ".join(self.vehicle_ids[k] for k in sim.acting())
            return f"vehicle {args['vehicle']} is busy until {hhmm(veh.free)}; free now: {now}"
        if name == "park":
            if sim.vehicles[v].onboard:
                return f"vehicle {args['vehicle']} still carries passengers"
            return None
        stop = self._stop[args["stop"]]
        reason = sim.structural_reason(v, stop)
        if reason:
            return reason
        if stop not in sim.legal_stops(v):
            return sim.feasibility_reason(v, stop) or "masked"
        return None

    def _action_mask(self) -> np.ndarray:
        sim = self.sim
        mask = np.zeros(self.codec.n_flat, dtype=bool)
        n_stops = len(self.stop_names)
        for v in sim.acting():
            for stop in sim.legal_stops(v):
                mask[self._dispatch_offset + v * n_stops + stop] = True
            if not sim.vehicles[v].onboard:
                mask[self._park_offset + v] = True
        return mask

    def _is_terminated(self) -> bool:
        return self.sim.done

    def _optimality(self) -> float:
        return float(self._final_metrics()[0]["optimality"])

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self._final_metrics()

    def _extra_info(self) -> dict[str, Any]:
        clock = self.sim.clock
        events, self._events = self._events, []
        return {"clock": int(clock) if clock is not None else -1, "events": events}

    # ================================================================== actions
    def _act_dispatch(self, vehicle: str, stop: str) -> None:
        v, s = self._vid[vehicle], self._stop[stop]
        visit = self.sim.dispatch(v, s)
        self._events.append(
            f"{vehicle} leaves at {hhmm(visit.depart)} for {stop}, arrives {hhmm(visit.arrive)}"
            + (f", serves at {hhmm(visit.service)}" if visit.service != visit.arrive else "")
        )
        self._settle()

    def _act_park(self, vehicle: str) -> None:
        self.sim.park(self._vid[vehicle])
        self._events.append(f"{vehicle} parks")
        self._settle()

    def _act_submit(self, assignments: Any) -> None:
        plan = self.sim.parse_plan(assignments.model_dump())
        self._run_plan(plan)
        self._settle()

    def _run_plan(self, plan: dict[int, list[int]]) -> None:
        self.sim.run_plan(plan, on_disruption=self._on_disruption)
        self._events.append("plan carried out")

    def _on_disruption(self, sim: RideSim, fired: list[Any]) -> None:
        """Subclass hook (P4): disruptions were just applied."""

    def _settle(self) -> None:
        """Apply what the clock has reached; park vehicles that have nothing left to do."""
        sim = self.sim
        while True:
            fired = sim.advance()
            if fired:
                self._on_disruption(sim, fired)
            idle = [
                v for v in sim.acting()
                if not sim.vehicles[v].onboard and WAITING not in sim.status
            ]
            if not idle:
                return
            for v in idle:
                sim.park(v)
                self._events.append(f"{self.vehicle_ids[v]} parks (no request left)")

    # ================================================================== results
    def reference(self) -> dict[str, Any]:
        """The oracle's reference (value, plan, solver status and budget)."""
        return p3_reference(self.instance)

    def _final_metrics(self) -> tuple[dict[str, Any], dict[str, Any]]:
        if self._final is None:
            metrics = self._metrics(self.reference()["value"])
            self._final = (metrics, self._solution())
        return self._final

    def _solution(self) -> dict[str, Any]:
        return {"assignments": self.sim.assignments()}

    def _metrics(self, reference_cost: float) -> dict[str, Any]:
        sim, inst = self.sim, self.instance
        served = sim.served()
        cost = sim.cost()
        feasible = not sim.violations
        declared = 3 * sim.R + sim.V
        delivering = {sim.assigned[r] for r in range(sim.R) if sim.status[r] == DELIVERED}
        return {
            "planning_quality": served / sim.R,
            "optimality": optimality_ratio(reference_cost, cost, feasible),
            "constraint_satisfaction": 1.0 - len(sim.broken) / declared,
            "coordination": len(delivering) / sim.V,
            "cost": int(cost),
            "reference_cost": float(reference_cost),
            "travel_minutes": int(sim.travel_minutes()),
            "served": int(served),
            "requests": int(sim.R),
            "unserved_penalty": int(inst.unserved_penalty),
            "violations": list(sim.violations),
        }

    # ================================================================== rendering
    def _active_disruptions(self) -> list[Any]:
        return []

    def _render_text(self) -> str:
        return rendering.text(self.instance, self.sim, self._active_disruptions())

    def _render_image(self) -> np.ndarray:
        return rendering.draw(self.instance, self.sim, self._pos, self._active_disruptions())
