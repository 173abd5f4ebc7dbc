"""What the fleet disruption envs (P4 over P3, P8 over P5) share: road disruptions injected
and applied as the clock reaches them, a submitted plan that pauses when one strikes, the
state snapshot the adaptation yardstick starts from, and the disruption observation and info.

:class:`FleetDisruptionMixin` goes before the family's env in the bases
(``class RideSharingDisruptionEnv(FleetDisruptionMixin, RideSharingEnv)``). The family names
its disruption parser and JSON form, which roads a disruption strikes
(:meth:`FleetDisruptionMixin._struck_roads`), the window of start minutes that matter and
how its adaptation yardstick is found. The schedule, injection, reporting, the snapshot,
pausing and the adaptation modes are the disruption kit's
(:class:`~crab_gym.envs.realm.common.disruption_env.DisruptedRealmEnv`, which this mixin extends).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.envs.realm.common.disruption_env import DisruptedRealmEnv
from crab_gym.envs.realm.common.fleet.roads import in_force, same_items
from crab_gym.envs.realm.common.references import optimality_ratio

#: Sets of disruptions in force whose road flags are kept per instance (then it starts afresh).
ROADS_MEMO = 256

#: The event line of a plan that a disruption paused.
PAUSED = "plan paused by a disruption; submit the plan again (or a new one)"


class FleetDisruptionMixin(DisruptedRealmEnv):
    """Disruptions of a fleet env (see the module docstring); goes before a ``FleetEnv``."""

    vehicle_ids: list[str]
    stop_names: list[str]

    def _observation_spaces(self, inst: Any) -> dict[str, gym.Space]:
        n = len(self.places(inst))  # type: ignore[attr-defined]
        return {**super()._observation_spaces(inst), "disrupted_roads": gym.spaces.MultiBinary((n, n))}  # type: ignore[misc]

    def _schedule(self) -> list[Any]:
        return list(self.instance.disruptions)

    def _restart(self) -> None:
        self._clear_disruptions()  # the injected disruptions are gone
        super()._restart()

    # ================================================================== disruption protocol
    def disruption_targets(self) -> dict[str, Any]:
        """Where disruptions may strike here: ``routes`` ("a-b", one per road), ``locations``,
        and the ``window`` of start minutes that matter."""
        names = self.places()  # type: ignore[attr-defined]
        routes = [f"{names[i]}-{names[j]}" for i, j in self.instance.network.road_pairs()]
        return {"routes": routes, "locations": names, "window": self._disruption_window()}

    @abstractmethod
    def _disruption_window(self) -> tuple[int, int]:
        """The start minutes that can matter (a family's: first vehicle free .. the end)."""
        raise NotImplementedError

    def _on_disruption(self, sim: Any, fired: list[Any]) -> None:
        self._note_fired(fired)
        if any(d.duration > 0 for d in fired):
            self._take_snapshot(sim.copy)

    def _run_plan(self, plan: dict[int, list[int]]) -> None:
        first = self._snapshot is None
        remaining, _ = self.sim.run_plan(plan, pause_on_disruption=True, on_disruption=self._on_disruption)
        if first and self._snapshot is not None:  # the plan being followed when it struck
            self._snapshot_keep = {v: list(q) for v, q in remaining.items()}
        self._paused = bool(remaining) and not self.sim.done
        names = self.stop_names
        self._pending_plan = {self.vehicle_ids[v]: [names[s] for s in q] for v, q in remaining.items()}
        self._events.append(PAUSED if self._paused else "plan carried out")

    def _act_vehicle(self, name: str, vehicle: str, *args: Any) -> None:
        """A vehicle's own action ends a pause: the pending plan is dropped."""
        self._unpause()
        super()._act_vehicle(name, vehicle, *args)  # type: ignore[misc]

    def _active_disruptions(self) -> list[Any]:
        now = self.sim.clock
        return [] if now is None else list(in_force(self.sim.applied, now))

    # ================================================================== CrabEnv hooks
    @abstractmethod
    def _struck_roads(self, d: Any) -> list[tuple[int, int]]:
        """The directed roads ``(i, j)`` disruption ``d`` strikes (the observation's flags)."""
        raise NotImplementedError

    def _get_obs(self) -> dict[str, Any]:
        obs = super()._get_obs()
        obs["disrupted_roads"] = self._disrupted_roads(tuple(self._active_disruptions())).copy()
        return obs

    def _disrupted_roads(self, active: tuple[Any, ...]) -> np.ndarray:
        """:meth:`_road_flags` of ``active`` (read only), worked out once per instance and set
        of disruptions in force (frozen models: the same ones strike the same roads)."""
        memo = getattr(self, "_roads_memo", None)
        if memo is None or memo[0] is not self.instance or len(memo[1]) > ROADS_MEMO:
            memo = self._roads_memo = (self.instance, {})
        key = tuple(map(id, active))
        hit = memo[1].get(key)
        if hit is None or not same_items(hit[0], active):
            hit = memo[1][key] = (active, self._road_flags(list(active)))
        return hit[1]

    def _road_flags(self, active: list[Any]) -> np.ndarray:
        """1 on every directed road ``(i, j)`` an ``active`` disruption strikes."""
        flags = np.zeros((len(self.places()),) * 2, dtype=np.int8)  # type: ignore[attr-defined]
        for d in active:
            for i, j in self._struck_roads(d):
                flags[i, j] = 1
        return flags

    def _extra_info(self) -> dict[str, Any]:
        return {**super()._extra_info(), **self._fired_info(), **self._pause_info()}

    # ================================================================== results
    def _solution(self) -> dict[str, Any]:
        out = super()._solution()  # type: ignore[misc]
        out["disruptions"] = [json.loads(d.model_dump_json()) for d in self.sim.applied]
        return out

    def _resolve_adaptation(self) -> float:
        """The re-solve from the snapshot, facing the disruptions still to come then and
        those injected after it."""
        schedule = list(self._snapshot.pending) + list(self._injected_after_snapshot)
        return float(self._resolved_adaptation_value(self._snapshot, schedule, self._snapshot_keep))

    @abstractmethod
    def _resolved_adaptation_value(self, snapshot: Any, schedule: list[Any], keep: dict[int, list[int]] | None) -> float:
        """The yardstick re-solved from ``snapshot`` facing ``schedule`` (``keep``: the plan
        being followed then)."""
        raise NotImplementedError

    def _adaptation_score(self, yardstick: float, cost: float, feasible: bool) -> float | None:
        """The adaptation of a plan of ``cost`` against the ``yardstick`` (a family may
        measure only the avoidable part; by default ``yardstick / cost``, 0 if infeasible)."""
        return optimality_ratio(yardstick, cost, feasible)

    def _metrics(self) -> dict[str, Any]:
        metrics = super()._metrics()  # type: ignore[misc]
        feasible, cost = self._plan_feasible(), metrics["cost"]
        adaptation, yardstick = self._measure_adaptation(lambda value: self._adaptation_score(value, cost, feasible))
        metrics.update(adaptation=adaptation, adaptation_reference_cost=yardstick,
                       disruptions_applied=len(self.sim.applied))
        return metrics
