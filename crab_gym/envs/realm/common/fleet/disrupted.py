"""What the fleet disruption envs (P4 over P3, P8 over P5) share: road disruptions injected
and applied as the clock reaches them, a submitted plan that pauses when one strikes, the
state snapshot the adaptation yardstick starts from, and the disruption observation and info.

:class:`FleetDisruptionMixin` goes before the family's env in the bases
(``class RideSharingDisruptionEnv(FleetDisruptionMixin, RideSharingEnv)``). The family names
its disruption parser and JSON form, which roads a disruption strikes
(:meth:`FleetDisruptionMixin._struck_roads`), the window of start minutes that matter and
how its adaptation yardstick is found. The generic disruption kit of
``crab_gym.envs.realm.common`` may later take over the parts that are not about vehicles and
roads (snapshot, pause, injection, deferred adaptation).
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.envs.realm.common.disruptions import DisruptionReport, episode_over_report, inject_and_report
from crab_gym.envs.realm.common.env import clock as hhmm
from crab_gym.envs.realm.common.fleet.roads import in_force
from crab_gym.envs.realm.common.references import NOT_APPLICABLE, optimality_ratio

#: The event line of a plan that a disruption paused.
PAUSED = "plan paused by a disruption; submit the plan again (or a new one)"


class FleetDisruptionMixin:
    """Disruptions of a fleet env (see the module docstring); mixes into a ``FleetEnv``."""

    #: ``parse(disruption, instance)`` (a staticmethod): a typed disruption checked against the instance.
    disruption_parser: Any
    #: ``to_json(disruption)`` (a staticmethod): a disruption as a plain JSON-compatible dict.
    disruption_json: Any
    adaptation_mode: str
    instance: Any
    sim: Any
    _events: list[str]
    vehicle_ids: list[str]
    stop_names: list[str]

    def _observation_spaces(self, inst: Any) -> dict[str, gym.Space]:
        n = len(self.places(inst))  # type: ignore[attr-defined]
        return {**super()._observation_spaces(inst), "disrupted_roads": gym.spaces.MultiBinary((n, n))}  # type: ignore[misc]

    def _schedule(self) -> list[Any]:
        return list(self.instance.disruptions)

    def _restart(self) -> None:
        self._injected: list[Any] = []
        self._injected_after_snapshot: list[Any] = []
        self._snapshot: Any = None
        self._snapshot_keep: dict[int, list[int]] | None = None
        self._fired: list[dict[str, Any]] = []
        self._paused = False
        self._pending_plan: dict[str, list[str]] = {}
        self._forget_reference()  # type: ignore[attr-defined]  # the injected disruptions are gone
        super()._restart()  # type: ignore[misc]

    # ================================================================== disruption protocol
    def parse_disruption(self, disruption: Any) -> Any:
        """A typed disruption from a mapping (or a typed one), checked against this instance.

        Raises :class:`~crab_gym.envs.realm.common.disruptions.InvalidDisruptionError` for a
        road or place the instance lacks, a negative duration or delay, or an unknown type.
        """
        return self.disruption_parser(disruption, self.instance)

    def apply_disruption(self, disruption: Any) -> DisruptionReport:
        """Inject a disruption (a typed model or a mapping with ``type``, where it strikes,
        ``start`` minute or None for now, ``duration``, ``delay``).

        It is applied at once if its start has come (a start in the past counts from now and
        still ends when it would have), otherwise when the clock reaches it. Returns what
        happened. Raises ``InvalidDisruptionError`` as :meth:`parse_disruption` does.
        """
        d = self.parse_disruption(disruption)
        now = self.sim.clock
        if now is None:
            return episode_over_report()
        if d.start is None:
            d = d.with_start(now)
        self._injected.append(d)
        if self._snapshot is not None:
            self._injected_after_snapshot.append(d)
        self._forget_reference()  # type: ignore[attr-defined]  # the reference faces the episode's disruptions
        return inject_and_report(self, d, now, self.disruption_json(d), self._events)

    def disruption_targets(self) -> dict[str, Any]:
        """Where disruptions may strike here: ``routes`` ("a-b", one per road), ``locations``,
        and the ``window`` of start minutes that matter."""
        names = self.places()  # type: ignore[attr-defined]
        routes = [f"{names[i]}-{names[j]}" for i, j in self.instance.network.road_pairs()]
        return {"routes": routes, "locations": names, "window": self._disruption_window()}

    def _disruption_window(self) -> tuple[int, int]:
        """The start minutes that can matter (a family's: first vehicle free .. the end)."""
        raise NotImplementedError

    def faced_schedule(self) -> list[Any]:
        """The disruptions this episode faces: the instance's plus the injected ones."""
        return list(self.instance.disruptions) + list(self._injected)

    def _on_disruption(self, sim: Any, fired: list[Any]) -> None:
        self._forget_reference()  # type: ignore[attr-defined]
        for d in fired:
            self._fired.append(self.disruption_json(d))
            self._events.append(f"disruption at {hhmm(d.start)}: {d.describe()}")
        if self._snapshot is None and any(d.duration > 0 for d in fired):
            self._snapshot = sim.copy()

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
        self._paused, self._pending_plan = False, {}
        super()._act_vehicle(name, vehicle, *args)  # type: ignore[misc]

    def _active_disruptions(self) -> list[Any]:
        now = self.sim.clock
        return [] if now is None else list(in_force(self.sim.applied, now))

    # ================================================================== CrabEnv hooks
    def _struck_roads(self, d: Any) -> list[tuple[int, int]]:
        """The directed roads ``(i, j)`` disruption ``d`` strikes (the observation's flags)."""
        raise NotImplementedError

    def _get_obs(self) -> dict[str, Any]:
        obs = super()._get_obs()  # type: ignore[misc]
        flags = np.zeros((len(self.places()),) * 2, dtype=np.int8)  # type: ignore[attr-defined]
        for d in self._active_disruptions():
            for i, j in self._struck_roads(d):
                flags[i, j] = 1
        obs["disrupted_roads"] = flags
        return obs

    def _extra_info(self) -> dict[str, Any]:
        info = super()._extra_info()  # type: ignore[misc]
        fired, self._fired = self._fired, []
        info.update(
            {
                "disruptions": fired,
                "active_disruptions": [d.describe() for d in self._active_disruptions()],
                "paused": bool(self._paused),
                "pending_plan": {k: list(v) for k, v in self._pending_plan.items()},
            }
        )
        return info

    # ================================================================== results
    def _solution(self) -> dict[str, Any]:
        out = super()._solution()  # type: ignore[misc]
        out["disruptions"] = [json.loads(d.model_dump_json()) for d in self.sim.applied]
        return out

    def _oracle_adaptation_value(self, metrics: dict[str, Any]) -> float | None:
        """The yardstick of ``adaptation_reference="oracle"`` (a stored value, no solve)."""
        raise NotImplementedError

    def _resolved_adaptation_value(self, snapshot: Any, schedule: list[Any], keep: dict[int, list[int]] | None) -> float:
        """The yardstick re-solved from ``snapshot`` facing ``schedule`` (``keep``: the plan
        being followed then)."""
        raise NotImplementedError

    def _metrics(self) -> dict[str, Any]:
        metrics = super()._metrics()  # type: ignore[misc]
        feasible = self._plan_feasible()  # type: ignore[attr-defined]
        cost = metrics["cost"]
        ref_value: float | None = None
        adaptation: float | None
        if self._snapshot is None:
            adaptation = NOT_APPLICABLE  # no disruption struck before the episode ended
        elif self.adaptation_mode == "oracle":
            ref_value = self._oracle_adaptation_value(metrics)
            adaptation = optimality_ratio(ref_value, cost, feasible)
        elif self._defer_adaptation():  # type: ignore[attr-defined]
            adaptation = NOT_APPLICABLE  # finish_adaptation() solves it
        else:
            schedule = list(self._snapshot.pending) + list(self._injected_after_snapshot)
            ref_value = float(self._resolved_adaptation_value(self._snapshot, schedule, self._snapshot_keep))
            adaptation = optimality_ratio(ref_value, cost, feasible)
        metrics["adaptation"] = adaptation
        metrics["adaptation_reference_cost"] = ref_value
        metrics["disruptions_applied"] = len(self.sim.applied)
        return metrics
