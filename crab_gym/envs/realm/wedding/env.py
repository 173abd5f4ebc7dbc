"""Realm-P5-v0: wedding logistics (guest pickups and errands at shops with opening hours).

The env is :class:`WeddingEnv`; its docstring is the reference. Realm-P8-v0
(:mod:`crab_gym.envs.realm.wedding.env_disruptions`) builds on it.
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
from crab_gym.envs.realm.wedding.checker import WeddingCheck, check
from crab_gym.envs.realm.wedding.coordination import fleet_coordination
from crab_gym.envs.realm.wedding.formats import load_p5, shipped_p5_names
from crab_gym.envs.realm.wedding.generator import generate_p5
from crab_gym.envs.realm.wedding.model import WeddingInstance
from crab_gym.envs.realm.wedding.references import p5_reference
from crab_gym.envs.realm.wedding.render import VIEWER, layout
from crab_gym.envs.realm.wedding.sim import DELIVERED, ONBOARD, WAITING, WeddingSim, hhmm

DEFAULT_INSTANCE = "p5_small_00"
__all__ = ["MAX_MINUTE", "MAX_TRAVEL", "WeddingEnv", "instance_kind"]


def instance_kind(problem: str, types: tuple[type, ...], names: Callable[[], Sequence[str]]) -> InstanceKind:
    """What the ``instance`` argument of the P5 or P8 env accepts (checked, explained when wrong)."""
    files = f"a path to a JSON file (crab_gym's format or an upstream REALM-Bench {problem} file)"
    return fleet_instance_kind(problem, types, names, ("00", "00", "05"), files)


#: Where the env's instances come from (``instance=``; ``generator=``: every count of the drawn
#: instances, and a size class).
SOURCE = InstanceSource(instance_kind("P5", (WeddingInstance,), shipped_p5_names), load_p5,
                        SizedGenerator(generate_p5, {"n_guests": 3, "n_errands": 3, "n_vehicles": 2}, "p5"),
                        DEFAULT_INSTANCE)


def _drive(vehicle: str, stop: str, env: Any) -> None:
    env._act_vehicle("drive", vehicle, stop)


def _wait(vehicle: str, env: Any) -> None:
    env._act_vehicle("wait", vehicle)


def _finish(vehicle: str, env: Any) -> None:
    env._act_vehicle("finish", vehicle)


def _submit_plan(routes: Any, env: Any) -> None:
    env._act_submit()


class WeddingEnv(FleetEnv):
    """Wedding logistics (REALM-Bench P5): vehicles fetch guests from the airport after they
    land and run errands at shops inside their opening hours, bringing everyone and everything
    to the venue before the photo, minimising driving minutes.

    ## Description

    Units: minutes; clock times are minutes from midnight. Each vehicle starts at its place at
    its ``available`` minute, drives to its next stop as soon as it has served one, waits there
    for the guest to land or the shop to open, and ends its route at the venue.

    | part | definition |
    |---|---|
    | decision | each vehicle's ordered stops: ``pickup:<guest>``, ``errand:<errand>``, ``dropoff:venue`` (unloads everything); a vehicle ends at the venue |
    | hard constraints | passengers <= seats; pickup after landing; errand service inside the shop's hours; every guest and every errand's goods at the venue by ``photo_time``; every vehicle at the venue by ``deadline`` (a guest's own car by ``photo_time``) |
    | objective | minimise total driving minutes (+ ``unserved_penalty``, default 1000, per guest or errand left undone: such a plan is infeasible) |
    | travel times | shortest paths over the town's roads |

    ## Action Space

    A ``OneOf`` over one ``Dict`` per action (``V`` vehicles, ``S`` = guests + errands + 1
    stops); also accepted as a tool call ``{"name": ..., "arguments": {...}}``.

    | action | arguments | meaning |
    |---|---|---|
    | ``drive`` | ``vehicle`` (``Discrete(V)``), ``stop`` (``Discrete(S)``) | send a vehicle that is free now to its next stop; the mask allows only stops that keep every constraint with the travel times in force now |
    | ``wait`` | ``vehicle`` | wait until the next event (another vehicle free, a guest landing, a shop opening, a disruption) |
    | ``finish`` | ``vehicle`` | drive to the venue, unload, and end the route (always allowed for a free vehicle) |
    | ``submit_plan`` | ``routes``: per vehicle id a ``Sequence`` of stops | the whole plan, ``{"van": ["pickup:alex", "errand:gift", "dropoff:venue"]}``, driven to the end; a vehicle ends at the venue after its last stop; vehicles not listed drive straight there. Unknown or repeated stops make the call invalid; a late stop or an overload is carried out and counted as a violation |

    ``action_masks()`` covers every ``(vehicle, stop)`` drive, then every ``wait``, then every
    ``finish``.

    ## Observation Space

    A ``Dict`` (``L`` places, ``G`` guests, ``E`` errands):

    | key | shape, type | meaning |
    |---|---|---|
    | ``clock`` | ``(1,)`` float32 in [0, 2880] | the current minute |
    | ``vehicle_place`` | ``(V,)`` MultiDiscrete(L) | each vehicle's place |
    | ``vehicle_free_at`` | ``(V,)`` float32 | the minute each vehicle is free |
    | ``vehicle_load`` / ``vehicle_capacity`` | ``(V,)`` float32 | guests on board / seats |
    | ``vehicle_acting`` / ``vehicle_finished`` | ``(V,)`` MultiBinary | decides now / has ended |
    | ``item_status`` | ``(G + E,)`` MultiDiscrete(3) | guests then errands: 0 to do, 1 on board, 2 at the venue |
    | ``item_place`` | ``(G + E,)`` MultiDiscrete(L) | the guest's or shop's place |
    | ``item_times`` | ``(G + E, 2)`` float32 | earliest and latest service start |
    | ``travel_time`` | ``(L, L)`` float32 | shortest-path minutes in force now |
    | ``action_mask`` | ``(n_flat,)`` MultiBinary | ``action_masks()`` |

    ## Rewards

    Per valid step, ``progress_weight`` (0.5) x the rise in the sub-goal graph's completeness
    (per guest ``picked_up_<g>`` then ``at_venue_<g>`` by the photo; per errand
    ``errand_<e>`` inside the hours then ``delivered_<e>`` by the photo; per vehicle
    ``back_<v>`` in time, checked once every guest and errand is at the venue, so that doing
    nothing passes no sub-goal); at the end ``optimality_weight`` (0.5) x optimality = reference
    cost / cost (capped at 1; 0 if any constraint is broken or anything is left undone).
    Invalid actions change nothing and earn ``-invalid_action_penalty``. The return lies in
    [0, 1].

    ## Starting State

    Every vehicle at its place, free at its ``available`` minute; nothing done.

    ## Episode End

    Terminated when every vehicle has ended its route (a vehicle that is free and empty when
    nothing is left to do ends by itself). At the end ``info["solution"]`` holds ``routes``,
    ``departs`` (each vehicle's departure minutes), ``pickups`` (guest, vehicle, minute) and ``errands_done`` (errand, vehicle, minute): REALM's
    shape; ``info["metrics"]``: ``planning_quality`` (share of guests and errands brought to
    the venue), ``optimality``, ``constraint_satisfaction`` (share of the declared constraints
    met: 2 per guest, 2 per errand, 2 per vehicle), ``coordination`` (the share of the gain
    from working together that the plan realises: ``(solo - cost) / (solo - best)`` clipped to
    [0, 1], where ``solo`` is the best single-vehicle plan (the reference record's
    ``solo_value``), ``best`` the best known plan and the plan's cost its driving plus the
    penalty per item never visited at undisrupted travel times; 0 when infeasible or when one
    vehicle does all the work; ``None`` (not applicable) when one vehicle alone reaches the best
    known plan or the reference has no ``solo_value``; see
    :mod:`crab_gym.envs.realm.wedding.coordination`), ``cost``,
    ``reference_cost``, ``solo_cost`` (the routing oracle's plan of one vehicle doing
    everything: the reference record's ``solo_value``), ``travel_minutes``, ``served``,
    ``items``, ``violations``. Every step's ``info`` has ``clock`` (-1 after the end) and
    ``events``.

    ## Arguments

    | argument | meaning |
    |---|---|
    | ``instance`` | a shipped name (``"p5_small_00"`` ... ``"p5_large_05"``), a JSON path (crab_gym's or an upstream REALM-Bench P5/P8 file), a mapping, or a ``WeddingInstance`` |
    | ``generator`` | ``{"n_guests": 3, "n_errands": 3, "n_vehicles": 2, "size": "small"}``: draw a fresh instance on every ``reset(seed=...)``; references are solved after the episode (see ``reference_solve``) and cached; or your own callable ``generator(rng) -> instance`` (as in Jumanji), whose draws must fit the env's spaces |
    | ``reference`` | a known reference cost to use instead |
    | ``reference_solve`` | ``"deferred"`` (default): an instance nobody shipped (generated, your file, a schedule changed by an injected disruption) is not solved inside ``step()``; ``finish_metrics()`` solves it after the episode (the evaluation runner calls it; until then the metrics say ``optimality_pending`` and the last reward's optimality term is 0: ``deferred_reward()`` gives that term after the episode, and the runner adds it to the return); ``"inline"``: solved inside the last ``step()`` |
    | ``render_mode`` | ``"ansi"`` or ``"rgb_array"`` (a 640 x 420 map) |
    | ``invalid_action_penalty``, ``progress_weight``, ``optimality_weight`` | reward settings |

    ## Version History

    * v0: Initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    #: Each vehicle is an agent (``crab_gym.parallel_env``): it drives, waits or finishes when free.
    agent_arguments = ("vehicle",)
    instance_source = SOURCE
    reference_lookup = staticmethod(p5_reference)
    checker = staticmethod(check)
    viewer = VIEWER
    move_action = "drive"
    plan_argument = "routes"
    places_field = "places"
    ended_words = "ended"

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | WeddingInstance | None = None, *, generator: dict | Callable[..., Any] | None = None,
        **options: Any,
    ) -> None:
        self._generator, inst = self.instance_source.start(instance, generator)
        self._name_fleet(inst)
        self._max_capacity = max(v.capacity for v in inst.vehicles)
        super().__init__(self._make_actions(inst), **options)
        self._offsets = {name: self.codec.flat_offsets[name] for name in ("drive", "wait", "finish")}
        self.observation_space = gym.spaces.Dict(self._observation_spaces(inst))
        self._use_instance(inst)

    def _observation_spaces(self, inst: WeddingInstance) -> dict[str, gym.Space]:
        V, N, L = len(inst.vehicles), inst.n_items, len(inst.places)
        return {
            "clock": gym.spaces.Box(0, MAX_MINUTE, (1,), np.float32),
            "vehicle_place": gym.spaces.MultiDiscrete([L] * V),
            "vehicle_free_at": gym.spaces.Box(0, MAX_MINUTE, (V,), np.float32),
            "vehicle_load": gym.spaces.Box(0, self._max_capacity, (V,), np.float32),
            "vehicle_capacity": gym.spaces.Box(0, self._max_capacity, (V,), np.float32),
            "vehicle_acting": gym.spaces.MultiBinary(V),
            "vehicle_finished": gym.spaces.MultiBinary(V),
            "item_status": gym.spaces.MultiDiscrete([3] * N),
            "item_place": gym.spaces.MultiDiscrete([L] * N),
            "item_times": gym.spaces.Box(0, MAX_MINUTE, (N, 2), np.float32),
            "travel_time": gym.spaces.Box(0, MAX_TRAVEL, (L, L), np.float32),
            "action_mask": gym.spaces.MultiBinary(self.codec.n_flat),
        }

    def _make_actions(self, inst: WeddingInstance) -> list[Action]:
        VehicleId, StopName = vehicle_and_stop_types(self.vehicle_ids, self.stop_names)
        strict = ConfigDict(extra="forbid")
        vfield = (VehicleId, Field(description="id of a vehicle that is free now"))
        drive = create_model("DriveParameters", __config__=strict, vehicle=vfield, stop=(
            StopName, Field(description="its next stop: 'pickup:<guest>', 'errand:<errand>' or 'dropoff:venue'")))
        one = create_model("VehicleParameters", __config__=strict, vehicle=vfield)
        routes = create_model("Routes", __config__=strict, **{
            vid: (list[StopName], Field(default_factory=list, max_length=2 * len(self.stop_names),  # type: ignore[valid-type]
                                        description=f"stops of {vid}, in order"))
            for vid in self.vehicle_ids
        })
        plan = create_model("SubmitPlanParameters", __config__=strict,
                            routes=(routes, Field(description="each vehicle's stops in order")))
        kept = KEPT
        return [
            Action("drive", _drive, drive, description="Send a vehicle that is free now to its next stop.", **kept),
            Action("wait", _wait, one, description="Let a free vehicle wait until the next event.", **kept),
            Action("finish", _finish, one,
                   description="Drive a free vehicle to the venue, unload, and end its route.", **kept),
            Action("submit_plan", _submit_plan, plan, description=(
                'Submit the whole plan: each vehicle\'s stops in order, e.g. {"van": ["pickup:alex", '
                '"errand:gift", "dropoff:venue"]}. Vehicles end at the venue; those not listed go straight there.'),
                **kept),
        ]

    # ================================================================== instances
    def _check_fits(self, inst: WeddingInstance) -> None:
        cur, other = self.instance, self._fit_problems(inst)
        if inst.stop_names() != self.stop_names:
            other.append(f"stops {inst.stop_names()} (this env: {self.stop_names})")
        if len(inst.places) != len(cur.places):
            other.append(f"{len(inst.places)} places (this env: {len(cur.places)})")
        if max(v.capacity for v in inst.vehicles) > self._max_capacity:
            other.append(f"a vehicle with more than {self._max_capacity} seats")
        if other:
            raise unfit_error(inst, cur, other, "vehicle ids, stops and number of places")

    def _use_instance(self, inst: WeddingInstance) -> None:
        self.instance = inst
        self._pos = layout(inst)
        sim = WeddingSim(inst)
        self._item_place = sim.place[: sim.N].copy()
        self._item_times = np.clip(np.array(list(zip(sim.ready, sim.latest)), dtype=np.float32).reshape(sim.N, 2),
                                   0, MAX_MINUTE)
        self._restart()

    def _new_sim(self) -> WeddingSim:
        return WeddingSim(self.instance, self._schedule())

    def _restart(self) -> None:
        self._verdict: WeddingCheck | None = None
        super()._restart()

    # ================================================================== CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        return self._instance_graph(self._new_graph)

    def _new_graph(self) -> nx.DiGraph:
        """Pickup/errand -> at the venue per item, then every vehicle back (the evaluators
        read the env they are given, so the graph serves every episode on the instance)."""
        g = nx.DiGraph()
        inst = self.instance
        arrived = []
        for s, guest in enumerate(inst.guests):
            arrived.append(self._goal(f"at_venue_{guest.guest_id}", "at the venue by the photo", self._arrived(s)))
            g.add_edge(self._goal(f"picked_up_{guest.guest_id}", "picked up after landing", self._taken(s)), arrived[-1])
        for e, errand in enumerate(inst.errands):
            s = inst.n_guests + e
            arrived.append(self._goal(f"delivered_{errand.errand_id}", "goods at the venue by the photo", self._arrived(s)))
            g.add_edge(self._goal(f"errand_{errand.errand_id}", "done inside the shop's hours", self._taken(s)), arrived[-1])
        for v, vid in enumerate(self.vehicle_ids):
            # checked once everyone and everything is at the venue: driving there with nothing
            # done is no progress
            back = self._goal(f"back_{vid}", "at the venue by its end time, the work done", self._back(v))
            g.add_edges_from((a, back) for a in arrived)
        return g

    @staticmethod
    def _goal(name: str, description: str, check: Callable[[Any], bool]) -> Any:
        @evaluator(name=name, description=description)
        def goal(env) -> bool:
            return check(env)

        return goal

    @staticmethod
    def _taken(s: int) -> Callable[[Any], bool]:
        def check(env: Any) -> bool:
            sim = env.sim
            return sim.status[s] >= ONBOARD and sim.served_at[s] <= sim.latest[s]

        return check

    @staticmethod
    def _arrived(s: int) -> Callable[[Any], bool]:
        def check(env: Any) -> bool:
            sim = env.sim
            return sim.status[s] == DELIVERED and sim.delivered_at[s] <= sim.inst.photo_time

        return check

    @staticmethod
    def _back(v: int) -> Callable[[Any], bool]:
        def check(env: Any) -> bool:
            veh = env.sim.vehicles[v]
            return veh.finished and veh.end_time <= env.instance.end_by(v)

        return check

    def _get_obs(self) -> dict[str, Any]:
        sim = self.sim
        clock = sim.clock
        now = clock if clock is not None else max(v.free for v in sim.vehicles)
        return {
            "clock": np.array([min(now, MAX_MINUTE)], dtype=np.float32),
            **self._vehicle_obs([len(v.guests) for v in sim.vehicles], "vehicle_place", "vehicle_finished"),
            "item_status": np.array(sim.status, dtype=np.int64),
            "item_place": self._item_place.copy(),
            "item_times": self._item_times.copy(),
            "travel_time": self._travel_obs(sim.matrix(now)),
            "action_mask": self._mask_obs(),
        }

    def _vehicle_action_reason(self, name: str, v: int) -> str | None:
        if name == "wait" and self.sim.next_event(v) is None:
            return "nothing is left to wait for"
        return None

    def _mask_vehicle(self, mask: np.ndarray, v: int) -> None:
        mask[self._offsets["wait"] + v] = self.sim.next_event(v) is not None
        mask[self._offsets["finish"] + v] = True

    # ================================================================== actions
    def _act_drive(self, vehicle: str, stop: str) -> None:
        x = self.sim.drive(self._vid[vehicle], self._stop[stop])
        self._events.append(f"{vehicle} leaves at {hhmm(x.depart)} for {stop}, arrives {hhmm(x.arrive)}"
                            + (f", serves {hhmm(x.start)}-{hhmm(x.end)}" if x.end != x.arrive else ""))
        self._settle()

    def _act_wait(self, vehicle: str) -> None:
        t = self.sim.wait(self._vid[vehicle])
        self._events.append(f"{vehicle} waits until {hhmm(t)}")
        self._settle()

    def _act_finish(self, vehicle: str) -> None:
        t = self.sim.finish(self._vid[vehicle])
        self._events.append(f"{vehicle} ends at the venue at {hhmm(t)}")
        self._settle()

    def _idle_vehicles(self) -> list[int]:
        """Free, empty vehicles, once nothing is left to do: they end at the venue."""
        sim = self.sim
        if WAITING in sim.status:
            return []
        return [v for v in sim.acting() if sim.vehicles[v].empty]

    def _retire(self, v: int) -> None:
        t = self.sim.finish(v)
        self._events.append(f"{self.vehicle_ids[v]} ends at the venue at {hhmm(t)} (nothing left to do)")

    # ================================================================== results
    def verdict(self) -> WeddingCheck:
        """The independent checker's verdict on what has been driven (kept once the episode ends)."""
        if self._verdict is not None:
            return self._verdict
        verdict = self.sim.check()
        if self.sim.done:
            self._verdict = verdict
        return verdict

    def _agent_cost(self) -> float:
        return float(self.verdict().cost)

    def _plan_feasible(self) -> bool:
        return self.verdict().feasible

    def _solution(self) -> dict[str, Any]:
        v = self.verdict()
        return {"routes": self.sim.routes(), "departs": self.sim.departs(), "pickups": list(v.pickups),
                "errands_done": list(v.errands_done)}

    def _coordination_yardsticks(self) -> tuple[float | None, float | None]:
        """(best single-vehicle cost, best known cost) of the P5 problem (coordination)."""
        ref = self.reference
        return ref.extra.get("solo_value"), (ref.value if ref.feasible else None)

    def _metrics(self) -> dict[str, Any]:
        v = self.verdict()
        reference = self.reference.value
        solo, best = self._coordination_yardsticks()
        coordination = fleet_coordination(self.instance, self.sim.routes(), feasible=v.feasible, solo=solo, best=best)
        return {
            **v.metrics,
            "coordination": coordination.score,
            "optimality": self._optimality(),
            "cost": int(v.cost),
            "reference_cost": None if reference is None else float(reference),
            "solo_cost": self.reference.extra.get("solo_value"),
            "travel_minutes": int(v.travel),
            "served": int(v.served),
            "items": int(self.instance.n_items),
            "violations": list(v.violations),
        }
