"""Realm-P3-v0: urban ride-sharing (a dial-a-ride problem) as a Gymnasium env.

The env is :class:`RideSharingEnv`; its docstring is the reference (model, spaces, rewards,
episode end, arguments). Realm-P4-v0 (:mod:`crab_gym.envs.realm.ridesharing.env_disruptions`)
builds on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import networkx as nx
import numpy as np
from pydantic import ConfigDict, Field, create_model

from crab_gym.core import Action, evaluator
from crab_gym.envs.realm.common.env import InstanceKind, checked_init
from crab_gym.envs.realm.common.fleet.env import (
    KEPT,
    MAX_MINUTE,
    MAX_TRAVEL,
    FleetEnv,
    fleet_instance_kind,
    unfit_error,
    vehicle_and_stop_types,
)
from crab_gym.envs.realm.common.instance_source import InstanceSource, SizedGenerator
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.ridesharing.checker import check
from crab_gym.envs.realm.ridesharing.coordination import ride_coordination
from crab_gym.envs.realm.ridesharing.formats import load_p3, shipped_p3_names
from crab_gym.envs.realm.ridesharing.generator import generate_p3
from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.references import p3_reference, solo_reference
from crab_gym.envs.realm.ridesharing.render import VIEWER, layout
from crab_gym.envs.realm.ridesharing.sim import DELIVERED, ONBOARD, WAITING, RideSim, hhmm

DEFAULT_INSTANCE = "p3_small_01"

__all__ = ["MAX_CAPACITY", "MAX_MINUTE", "MAX_TRAVEL", "RideSharingEnv", "instance_kind"]

#: Upper bound of the vehicle capacities in the observation (at least).
MAX_CAPACITY = 1000

def instance_kind(problem: str, types: tuple[type, ...], names: Callable[[], Sequence[str]]) -> InstanceKind:
    """What the ``instance`` argument of the P3 or P4 env accepts (checked, and explained
    when wrong): shipped ``p3_*``/``p4_*`` names, crab_gym or upstream files, instances."""
    files = "a path to a JSON file (crab_gym's format or an upstream REALM-Bench P3/P4 file)"
    return fleet_instance_kind(problem, types, names, ("01", "01", "05"), files)


#: Where the env's instances come from (``instance=``; ``generator=``: every count of the drawn
#: instances, and a size class).
SOURCE = InstanceSource(instance_kind("P3", (P3Instance,), shipped_p3_names), load_p3,
                        SizedGenerator(generate_p3, {"n_requests": 5, "n_vehicles": 2, "n_locations": 8}, "p3"),
                        DEFAULT_INSTANCE)


def _dispatch(vehicle: str, stop: str, env: Any) -> None:
    env._act_vehicle("dispatch", vehicle, stop)


def _park(vehicle: str, env: Any) -> None:
    env._act_vehicle("park", vehicle)


def _submit_plan(assignments: Any, env: Any) -> None:
    env._act_submit()


class RideSharingEnv(FleetEnv):
    """Urban ride-sharing (REALM-Bench P3, a dial-a-ride problem): vehicles pick passengers up
    inside their pickup windows and drop them off by their latest dropoff, with at most their
    capacity on board, minimising travel minutes plus a penalty per unserved request.

    ## Description

    A dial-a-ride problem with open routes (units: minutes; clock times are minutes from
    midnight). Each vehicle starts at its place at the instance's ``start_time``, drives to
    its next stop as soon as it has served one, and waits at a pickup until the window opens.

    | part | definition |
    |---|---|
    | decision | which vehicle serves which request, and the order of each vehicle's stops ``pickup:<id>`` / ``dropoff:<id>``; a request may be left unserved |
    | hard constraints | pickup by the window's close; dropoff by the request's ``latest_dropoff``; dropoff after pickup in the same vehicle; passengers on board <= capacity |
    | objective | minimise total travel minutes + ``unserved_penalty`` (default 5000) per unserved request; waiting is free |
    | travel times | shortest paths over the city's roads |

    Time moves by events: the *clock* is the earliest minute a vehicle that has not parked is
    free, and the vehicles free then decide.

    ## Action Space

    A ``OneOf`` over one ``Dict`` of arguments per action (``R`` requests, ``V`` vehicles);
    an action is also accepted as a tool call ``{"name": ..., "arguments": {...}}``.

    | action | arguments | meaning |
    |---|---|---|
    | ``dispatch`` | ``vehicle`` (``Discrete(V)``), ``stop`` (``Discrete(2R)``) | send a vehicle that is free now to its next stop; the mask allows only stops that keep every constraint with the travel times in force now (a vehicle whose passengers can no longer all arrive on time may still drop them, late) |
    | ``park`` | ``vehicle`` (``Discrete(V)``) | end an empty, free vehicle's route (vehicles with nothing left to do park by themselves) |
    | ``submit_plan`` | ``assignments``: per vehicle id a ``Sequence`` of stops | the whole plan in REALM's solution shape, ``{"v1": ["pickup:p1", "dropoff:p1"], ...}``, driven to the end; vehicles not listed park. Unknown or misplaced stops make the call invalid; a late stop or an overload is carried out and counted as a violation |

    ``action_masks()`` covers the finite choices in ``codec.flat_to_call`` order: every
    ``(vehicle, stop)`` dispatch, then every ``park``.

    ## Observation Space

    A ``Dict`` (``L`` places):

    | key | shape, type | meaning |
    |---|---|---|
    | ``clock`` | ``(1,)`` float32 in [0, 2880] | the current minute (after the end: the last vehicle's finish) |
    | ``vehicle_location`` | ``(V,)`` MultiDiscrete(L) | each vehicle's place (index into ``instance.locations``) |
    | ``vehicle_free_at`` | ``(V,)`` float32 | the minute each vehicle is free |
    | ``vehicle_load`` | ``(V,)`` float32 | passengers on board |
    | ``vehicle_capacity`` | ``(V,)`` float32 | seats |
    | ``vehicle_acting`` | ``(V,)`` MultiBinary | 1: the vehicle decides now |
    | ``vehicle_parked`` | ``(V,)`` MultiBinary | 1: its route has ended |
    | ``request_status`` | ``(R,)`` MultiDiscrete(3) | 0 waiting, 1 on board, 2 delivered |
    | ``request_vehicle`` | ``(R,)`` MultiDiscrete(V + 1) | 0: none yet, else 1 + the serving vehicle's index |
    | ``request_places`` | ``(R, 2)`` MultiDiscrete(L) | pickup and dropoff place |
    | ``request_times`` | ``(R, 3)`` float32 | window open, window close, latest dropoff |
    | ``travel_time`` | ``(L, L)`` float32 in [0, 10000] | shortest-path minutes in force now |
    | ``action_mask`` | ``(n_flat,)`` MultiBinary | ``action_masks()`` |

    ## Rewards

    Per valid step, ``progress_weight`` (0.5) x the rise in the sub-goal graph's completeness
    (per request: ``picked_up_<id>`` within the window, then ``delivered_<id>`` in time); at
    the end, ``optimality_weight`` (0.5) x optimality = reference cost / cost (capped at 1;
    0 if any constraint is broken). An invalid action changes nothing and earns
    ``-invalid_action_penalty``. With the default weights an episode's return lies in [0, 1]:
    1 = everyone delivered in time at the reference's cost.

    ## Starting State

    Every vehicle at its place, free at ``start_time`` (the clock); every request waiting.
    ``reset(seed=...)`` draws a fresh instance when the env has a ``generator``;
    ``reset(options={"instance": ...})`` swaps in another instance of the same shape (same
    vehicle ids, same stop names, same number of places; a ValueError otherwise).

    ## Episode End

    Terminated when every vehicle has parked. The env never truncates (wrap it in
    ``TimeLimit`` for a step cap). At the end ``info["solution"]`` holds
    ``{"assignments": {...}}`` and ``info["metrics"]``: ``planning_quality`` (share of
    requests delivered), ``optimality``, ``constraint_satisfaction`` (share of the 3 per
    request + 1 per vehicle declared constraints met), ``coordination`` (the share of the gain
    from working together that the plan realises: ``(solo - cost) / (solo - reference)``
    clipped to [0, 1], where ``solo`` is the best one-vehicle plan known, so any one-vehicle
    plan scores 0 and the reference 1; 0 for an infeasible plan; ``None`` when one vehicle
    alone is as good as the reference; see :mod:`crab_gym.envs.realm.ridesharing.coordination`),
    ``cost``, ``reference_cost``, ``travel_minutes``, ``served``, ``requests``, ``unserved_penalty``, ``violations``. Every
    step's ``info`` also has ``clock`` (-1 after the end) and ``events`` (what happened, in
    words).

    The reference (:attr:`reference`, a :class:`~crab_gym.envs.realm.common.references.Reference`
    whose ``plan`` is the ``submit_plan`` arguments) is the OR-Tools RoutingModel oracle's:
    precomputed for shipped instances; for others solved once and cached on disk, after the
    first episode by ``finish_metrics()`` (the evaluation runner calls it), or inside its last
    ``step()`` with ``reference_solve="inline"``.

    ## Arguments

    | argument | meaning |
    |---|---|
    | ``instance`` | a shipped name (``"p3_small_01"`` ... ``"p3_large_05"``; default ``"p3_small_01"``), a path to a JSON file (crab_gym's or a user's own upstream REALM-Bench P3/P4 file), a mapping, or a ``P3Instance`` |
    | ``generator`` | draw a fresh instance of a fixed shape on every ``reset(seed=...)``: ``{"n_requests": 5, "n_vehicles": 2, "n_locations": 8, "size": "small"}`` (every count required: requests and vehicles >= 1, places 2..25; ``size``, default ``"small"``, is the size class the instances are labelled with: it sets the oracle's time budget and, in P4, how many disruptions strike and over what span). Overrides ``instance``; references of drawn instances are solved at the end of an episode and cached on disk; or your own callable ``generator(rng) -> instance`` (as in Jumanji), whose draws must fit the env's spaces |
    | ``reference`` | a known reference cost to use instead of the shipped, cached or solved one |
    | ``reference_solve`` | ``"deferred"`` (default): an instance nobody shipped (generated, your file, a schedule changed by an injected disruption) is not solved inside ``step()``; ``finish_metrics()`` solves it after the episode (the evaluation runner calls it; until then the metrics say ``optimality_pending`` and the last reward's optimality term is 0: ``deferred_reward()`` gives that term after the episode, and the runner adds it to the return); ``"inline"``: solved inside the last ``step()`` |
    | ``render_mode`` | ``"ansi"`` (text) or ``"rgb_array"`` (a 480 x 360 map) |
    | ``invalid_action_penalty``, ``progress_weight``, ``optimality_weight`` | reward settings (see Rewards) |

    ## Version History

    * v0: Initial version. Later, still v0: ``generator=`` and same-shape instance swaps at
      reset; ``reference`` became a ``Reference`` record (it was a ``reference()`` method
      returning a dict). Dynamics and scores are unchanged. Issue 22, still v0: coordination
      is measured from the best one-vehicle plan (one vehicle alone scores 0; it was
      ``1 - cost / dedicated trips``, which rewarded chaining rides in one vehicle).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    #: Each vehicle is an agent (``crab_gym.parallel_env``): it dispatches or parks when free.
    agent_arguments = ("vehicle",)
    instance_source = SOURCE
    #: The P3 oracle's reference: shipped, cached or solved once (at the end of an episode).
    reference_lookup = staticmethod(p3_reference)
    checker = staticmethod(check)
    viewer = VIEWER

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | P3Instance | None = None, *,
        generator: dict | Callable[..., Any] | None = None, **options: Any,
    ) -> None:
        self._generator, inst = self.instance_source.start(instance, generator)
        self._name_fleet(inst)
        self._max_load = sum(r.passengers for r in inst.requests)
        self._max_capacity = max([MAX_CAPACITY] + [v.capacity for v in inst.vehicles])
        super().__init__(self._make_actions(inst), **options)  # reference, render_mode, reward weights
        self._park_offset = self.codec.flat_offsets["park"]
        self.observation_space = gym.spaces.Dict(self._observation_spaces(inst))
        self._use_instance(inst)

    def _observation_spaces(self, inst: P3Instance) -> dict[str, gym.Space]:
        R, V, L = inst.n_requests, inst.n_vehicles, len(inst.locations)
        return {
            "clock": gym.spaces.Box(0, MAX_MINUTE, (1,), np.float32),
            "vehicle_location": gym.spaces.MultiDiscrete([L] * V),
            "vehicle_free_at": gym.spaces.Box(0, MAX_MINUTE, (V,), np.float32),
            "vehicle_load": gym.spaces.Box(0, self._max_load, (V,), np.float32),
            "vehicle_capacity": gym.spaces.Box(0, self._max_capacity, (V,), np.float32),
            "vehicle_acting": gym.spaces.MultiBinary(V),
            "vehicle_parked": gym.spaces.MultiBinary(V),
            "request_status": gym.spaces.MultiDiscrete([3] * R),
            "request_vehicle": gym.spaces.MultiDiscrete([V + 1] * R),
            "request_places": gym.spaces.MultiDiscrete(np.full((R, 2), L)),
            "request_times": gym.spaces.Box(0, MAX_MINUTE, (R, 3), np.float32),
            "travel_time": gym.spaces.Box(0, MAX_TRAVEL, (L, L), np.float32),
            "action_mask": gym.spaces.MultiBinary(self.codec.n_flat),
        }

    def _make_actions(self, inst: P3Instance) -> list[Action]:
        VehicleId, StopName = vehicle_and_stop_types(self.vehicle_ids, self.stop_names)
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
        kept = KEPT
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

    # ================================================================== instances
    def _check_fits(self, inst: P3Instance) -> None:
        cur = self.instance
        other = self._fit_problems(inst)
        if inst.stop_names() != self.stop_names:
            mine = [r.passenger_id for r in cur.requests]
            other.append(f"passengers {[r.passenger_id for r in inst.requests]} (this env: {mine})")
        if len(inst.locations) != len(cur.locations):
            other.append(f"{len(inst.locations)} places (this env: {len(cur.locations)})")
        if sum(r.passengers for r in inst.requests) > self._max_load:
            other.append(f"more than {self._max_load} passengers in all")
        if max(v.capacity for v in inst.vehicles) > self._max_capacity:
            other.append(f"a vehicle with more than {self._max_capacity} seats")
        if other:
            raise unfit_error(inst, cur, other, "vehicle ids, stop names and number of places; make a new env for it")

    def _use_instance(self, inst: P3Instance) -> None:
        self.instance = inst
        self._pos = layout(inst)
        self._request_places = np.array(
            [[inst.index[r.pickup], inst.index[r.dropoff]] for r in inst.requests], dtype=np.int64
        )
        self._request_times = np.clip(
            np.array([[*r.pickup_window, r.latest_dropoff] for r in inst.requests], dtype=np.float32), 0, MAX_MINUTE
        )
        self._restart()

    def _new_sim(self) -> RideSim:
        return RideSim(self.instance, self._schedule())

    # ================================================================== CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        return self._instance_graph(self._new_graph)

    def _new_graph(self) -> nx.DiGraph:
        """A pickup -> drop-off pair of sub-goals per request (the evaluators read the env
        they are given, so the graph serves every episode on the instance)."""
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
        requests = np.array((sim.status, sim.assigned), dtype=np.int64)  # one numpy call for both rows
        return {
            "clock": np.array([min(clock if clock is not None else self._last_time(), MAX_MINUTE)], dtype=np.float32),
            **self._vehicle_obs([v.load for v in sim.vehicles], "vehicle_location", "vehicle_parked"),
            "request_status": requests[0].copy(),
            "request_vehicle": requests[1] + 1,
            "request_places": self._request_places.copy(),
            "request_times": self._request_times.copy(),
            "travel_time": self._travel_obs(sim.matrix(clock if clock is not None else sim.idle_minute())),
            "action_mask": self._mask_obs(),
        }

    def _last_time(self) -> int:
        return max(v.free for v in self.sim.vehicles)

    def _vehicle_action_reason(self, name: str, v: int) -> str | None:
        if name == "park" and self.sim.vehicles[v].onboard:
            return f"vehicle {self.vehicle_ids[v]} still carries passengers"
        return None

    def _mask_vehicle(self, mask: np.ndarray, v: int) -> None:
        if not self.sim.vehicles[v].onboard:
            mask[self._park_offset + v] = True

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

    def _idle_vehicles(self) -> list[int]:
        """Empty free vehicles, once no request waits: they park."""
        sim = self.sim
        return [v for v in sim.acting() if not sim.vehicles[v].onboard and WAITING not in sim.status]

    def _retire(self, v: int) -> None:
        self.sim.park(v)
        self._events.append(f"{self.vehicle_ids[v]} parks (no request left)")

    # ================================================================== results
    def _agent_cost(self) -> float:
        return float(self.sim.cost())

    def _plan_feasible(self) -> bool:
        return not self.sim.violations

    def _solution(self) -> dict[str, Any]:
        return {"assignments": self.sim.assignments()}

    def _solo_value(self) -> float | None:
        """The best one-vehicle plan's cost (the coordination baseline): shipped, cached or
        solved once, like the reference."""
        return self.yardstick.memo("solo", lambda: solo_reference(self.instance)["value"])

    def _metrics(self) -> dict[str, Any]:
        sim, inst = self.sim, self.instance
        reference = self.reference.value
        declared = 3 * sim.R + sim.V
        return {
            "planning_quality": sim.served() / sim.R,
            "optimality": self._optimality(),
            "constraint_satisfaction": 1.0 - len(sim.broken) / declared,
            "coordination": ride_coordination(sim.cost(), self._plan_feasible(), self._solo_value(), reference),
            "cost": int(sim.cost()),
            "reference_cost": None if reference is None else float(reference),
            "travel_minutes": int(sim.travel_minutes()),
            "served": int(sim.served()),
            "requests": int(sim.R),
            "unserved_penalty": int(inst.unserved_penalty),
            "violations": list(sim.violations),
        }
