"""What a vehicle-dispatch env does the same way in every fleet family (P3/P5, and through
them P4/P8): one vehicle acts at a time when it is free, the sub-goals and scores are the
family's, and the step loop, masks, plan submission and settling are this base's.

A family's env subclasses :class:`FleetEnv` (after setting its class attributes: the action
that moves a vehicle, the ``submit_plan`` argument, its viewer, its place field) and
gives its simulation (:meth:`FleetEnv._new_sim`), the vehicles that retire by themselves
(:meth:`FleetEnv._idle_vehicles`, :meth:`FleetEnv._retire`) and what its other per-vehicle
actions need (:meth:`FleetEnv._vehicle_action_reason`, :meth:`FleetEnv._mask_vehicle`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from crab_gym.envs.realm.common.env import InstanceKind, RealmEnv, hhmm
from crab_gym.envs.realm.common.fleet.roads import same_items
from crab_gym.envs.realm.common.fleet.sim import PlanError

#: Upper bound of every minute in the observation (two days).
MAX_MINUTE = 2 * 24 * 60
#: Upper bound of the travel minutes in the observation.
MAX_TRAVEL = 10_000

#: Keyword arguments of every env-bound action (the env is injected at run time).
KEPT = {"kept_params": ("env",), "required_kept": ("env",)}


def fleet_instance_kind(
    problem: str, types: tuple[type, ...], names: Callable[[], Sequence[str]], numbers: tuple[str, str, str], files: str
) -> InstanceKind:
    """What the ``instance`` argument of a fleet env accepts (checked, explained when wrong):
    shipped names (``numbers``: three example suffixes), crab_gym or upstream files, instances."""
    prefix = problem.lower()
    examples = tuple(f"{prefix}_{size}_{n}" for size, n in zip(("small", "medium", "large"), numbers))
    return InstanceKind(problem, types, names, f"crab_gym.datasets.list_instances('{problem}')", examples, files=files)


def vehicle_and_stop_types(vehicle_ids: Sequence[str], stop_names: Sequence[str]) -> tuple[Any, Any]:
    """``Literal`` types of the vehicle ids and the stop names (the actions' arguments)."""
    return Literal[tuple(vehicle_ids)], Literal[tuple(stop_names)]  # type: ignore[valid-type]


def unfit_error(inst: Any, current: Any, problems: Sequence[str], needs: str) -> ValueError:
    """Why an instance swapped in at reset does not fit an env made for ``current``."""
    return ValueError(
        f"instance {inst.name!r} does not fit this env (made for {current.name!r}): it has "
        + "; ".join(problems)
        + f". An instance swapped in at reset needs the same {needs}"
    )


class FleetEnv(RealmEnv):
    """The shared behaviour of the fleet envs (see the module docstring)."""

    #: A reset's prepared start state and the observation's travel matrix (see CrabEnv).
    derived_attributes = (*RealmEnv.derived_attributes, "_fresh", "_travel_memo", "_roads_memo")

    #: The action that sends a vehicle to a stop (its flat mask block: vehicle x stop).
    move_action = "dispatch"
    #: The ``submit_plan`` argument holding the plan.
    plan_argument = "assignments"
    #: The instance field naming the places (matrix order).
    places_field = "locations"
    #: How the family says a vehicle's route has ended (in "vehicle v has ... its route").
    ended_words = "finished"

    def _name_fleet(self, inst: Any) -> None:
        """The vehicle and stop names the action spaces are made of (from the first instance),
        and the fleet's per-episode scratch."""
        self.vehicle_ids = [v.vehicle_id for v in inst.vehicles]
        self.stop_names = inst.stop_names()
        self._vid = {vid: k for k, vid in enumerate(self.vehicle_ids)}
        self._stop = {s: k for k, s in enumerate(self.stop_names)}
        self._events: list[str] = []
        self._travel_memo: tuple[np.ndarray, np.ndarray] | None = None
        self._fresh: tuple[Any, tuple[Any, ...], Any] | None = None

    def places(self, inst: Any | None = None) -> list[str]:
        """The place names of ``inst`` (default: the current instance)."""
        return list(getattr(self.instance if inst is None else inst, self.places_field))

    # ================================================================== instances
    def _fit_problems(self, inst: Any) -> list[str]:
        """What every fleet env needs the same in a swapped-in instance: the vehicle ids and
        the number of places (a family adds its own)."""
        problems = []
        ids = [v.vehicle_id for v in inst.vehicles]
        if ids != self.vehicle_ids:
            problems.append(f"vehicles {ids} (this env: {self.vehicle_ids})")
        return problems

    def _schedule(self) -> list[Any]:
        """The disruptions the simulation applies as its clock reaches them (none here)."""
        return []

    @abstractmethod
    def _new_sim(self) -> Any:
        """A fresh simulation of the instance facing :meth:`_schedule`."""
        raise NotImplementedError

    def _restart(self) -> None:
        self.sim = self._fresh_sim()
        self._events = []
        self._settle()

    def _fresh_sim(self) -> Any:
        """A copy of :meth:`_new_sim`'s state, built once per instance and schedule (a copy is
        several times cheaper than building one: resets come every few steps)."""
        schedule = tuple(self._schedule())
        kept = self._fresh
        if kept is None or kept[0] is not self.instance or not same_items(kept[1], schedule):
            kept = self._fresh = (self.instance, schedule, self._new_sim())
        return kept[2].copy()

    # ================================================================== CrabEnv hooks
    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        if name == "submit_plan":
            try:
                self._pending = self.sim.parse_plan(args[self.plan_argument].model_dump())
            except PlanError as exc:
                return str(exc)
            return None
        v = self._vid[args["vehicle"]]
        reason = self._busy_reason(v, args["vehicle"])
        if reason:
            return reason
        if name == self.move_action:
            return self._stop_reason(v, self._stop[args["stop"]])
        return self._vehicle_action_reason(name, v)

    def _busy_reason(self, v: int, vehicle: str) -> str | None:
        """Why vehicle ``v`` cannot act now (None: it is free at the clock)."""
        sim = self.sim
        if v in sim.acting():
            return None
        veh = sim.vehicles[v]
        if veh.ended:
            return f"vehicle {vehicle} has {self.ended_words} its route"
        now = ", ".join(self.vehicle_ids[k] for k in sim.acting())
        return f"vehicle {vehicle} is busy until {hhmm(veh.free)}; free now: {now}"

    def _stop_reason(self, v: int, stop: int) -> str | None:
        """Why vehicle ``v`` may not go to ``stop`` now (None: it may)."""
        sim = self.sim
        reason = sim.structural_reason(v, stop)
        if reason:
            return reason
        # v acts now, so the mask's row of v holds sim.legal_stops(v) (computed once per state)
        if not self._current_mask()[self.codec.flat_offsets[self.move_action] + v * len(self.stop_names) + stop]:
            return sim.feasibility_reason(v, stop) or "masked"
        return None

    def _vehicle_action_reason(self, name: str, v: int) -> str | None:
        """Why the family's other action ``name`` of free vehicle ``v`` is invalid now."""
        return None

    def _action_mask(self) -> np.ndarray:
        sim = self.sim
        mask = np.zeros(self.codec.n_flat, dtype=bool)
        offset, n_stops = self.codec.flat_offsets[self.move_action], len(self.stop_names)
        for v in sim.acting():
            for stop in sim.legal_stops(v):
                mask[offset + v * n_stops + stop] = True
            self._mask_vehicle(mask, v)
        return mask

    def _mask_vehicle(self, mask: np.ndarray, v: int) -> None:
        """Set the family's other actions of free vehicle ``v`` in ``mask``."""

    def _is_terminated(self) -> bool:
        return self.sim.done

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self._metrics(), self._solution()

    def _extra_info(self) -> dict[str, Any]:
        now = self.sim.clock
        events, self._events = self._events, []
        return {"clock": int(now) if now is not None else -1, "events": events}

    @abstractmethod
    def _metrics(self) -> dict[str, Any]:
        raise NotImplementedError

    @abstractmethod
    def _solution(self) -> dict[str, Any]:
        raise NotImplementedError

    # ================================================================== actions
    def _act_vehicle(self, name: str, vehicle: str, *args: Any) -> None:
        """Run the per-vehicle action ``name`` (``_act_<name>``), the one door every
        vehicle's action goes through."""
        getattr(self, f"_act_{name}")(vehicle, *args)

    def _act_submit(self) -> None:
        plan, self._pending = self._pending, None
        if plan is None:
            raise RuntimeError("submit_plan runs through env.step(), which checks the plan first")
        self._run_plan(plan)
        self._settle()

    def _run_plan(self, plan: dict[int, list[int]]) -> None:
        self.sim.run_plan(plan, on_disruption=self._on_disruption)
        self._events.append("plan carried out")

    def _on_disruption(self, sim: Any, fired: list[Any]) -> None:
        """Disruptions were just applied (the disruption envs report them)."""

    def _settle(self) -> None:
        """Apply what the clock has reached; retire the vehicles with nothing left to do."""
        sim = self.sim
        while True:
            fired = sim.advance()
            if fired:
                self._on_disruption(sim, fired)
            idle = self._idle_vehicles()
            if not idle:
                return
            for v in idle:
                self._retire(v)

    @abstractmethod
    def _idle_vehicles(self) -> list[int]:
        """Free vehicles whose route ends by itself now (nothing left for them to do)."""
        raise NotImplementedError

    @abstractmethod
    def _retire(self, v: int) -> None:
        """End idle vehicle ``v``'s route, and say so in the events."""
        raise NotImplementedError

    # ================================================================== observation parts
    def _travel_obs(self, m: np.ndarray) -> np.ndarray:
        """The observation's ``travel_time`` for matrix ``m`` (a fresh array): clipped and
        converted once per matrix, since the roads' cache hands out the same few again."""
        memo = self._travel_memo
        if memo is None or memo[0] is not m:
            memo = self._travel_memo = (m, np.minimum(m, MAX_TRAVEL).astype(np.float32))
        return memo[1].copy()

    def _vehicle_obs(self, loads: Sequence[int], place_key: str, ended_key: str) -> dict[str, np.ndarray]:
        """The vehicles' part of the observation, from one table of their numbers (a numpy
        call, not one per key): place, free minute, load (``loads``: the family's count),
        seats, acting now, route ended; the family names the place and ended keys."""
        sim = self.sim
        clock = sim.clock
        table = np.array(
            [(v.loc, min(v.free, MAX_MINUTE), load, v.capacity, not v.ended and v.free == clock, v.ended)
             for v, load in zip(sim.vehicles, loads)],
            dtype=np.int64,
        ).T
        return {
            place_key: table[0].copy(),
            "vehicle_free_at": table[1].astype(np.float32),
            "vehicle_load": table[2].astype(np.float32),
            "vehicle_capacity": table[3].astype(np.float32),
            "vehicle_acting": table[4].astype(np.int8),
            ended_key: table[5].astype(np.int8),
        }

    def _mask_obs(self) -> np.ndarray:
        """The observation's ``action_mask``: ``action_masks()`` as int8."""
        return self.action_masks().astype(np.int8)

    # ================================================================== what the viewer shows
    def _active_disruptions(self) -> list[Any]:
        return []

