"""Realm-P4-v0: ride-sharing with disruptions (P3 plus traffic delays, closures, accidents,
construction that happen at given minutes).

Everything of :mod:`crab_gym.envs.realm.ridesharing.env` holds, plus:

* **Disruptions** (typed models in :mod:`crab_gym.envs.realm.ridesharing.disruptions`) are
  applied when the clock reaches their start: the instance's own schedule, and any passed to
  the public :meth:`RideSharingDisruptionEnv.apply_disruption` (what ``DisruptionWrapper``
  calls; the env implements the protocol of :mod:`crab_gym.envs.realm.common.disruptions`). From
  then on, and only from then, trips departing while a disruption is active take its delay
  (a closed road is passable again when it reopens; traffic goes round when quicker), so the
  travel-time matrix in the observation, the action masks and the costs reflect it. A trip
  already under way is not affected. ``info["disruptions"]`` lists those applied during the
  step, ``info["active_disruptions"]`` those in force, ``info["events"]`` says what happened.
* **submit_plan pauses at a disruption**: the plan is driven until a disruption is applied
  while stops remain; the episode then waits for a new plan (``info["paused"]`` is true and
  ``info["pending_plan"]`` holds what was left). Resubmitting a plan may repeat the stops
  already served (they are skipped) or list only what comes next.
* **Adaptation metric**: 0 if the final plan breaks a constraint; otherwise
  ``min(1, reference / cost)``, where the reference is the oracle that takes over from the
  episode's own state at its first disruption, keeping what is done, and re-solves at each
  disruption (:mod:`crab_gym.envs.realm.ridesharing.oracle_disruptions`; deterministic, cached); when a
  submitted plan was under way then, the oracle may also keep it. With no disruption in force
  during the episode it is 1 for a feasible plan.
  ``adaptation_reference="oracle"`` uses the precomputed adaptive oracle's value instead
  (no solver call at the end of an episode).
* **Optimality** compares with the P4 reference: the better of the adaptive oracle (the P3
  oracle's plan, re-solved at each disruption) and the greedy policy, neither of which sees
  disruptions coming (precomputed for shipped instances facing their own schedule; solved
  and cached when disruptions are injected).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from crab_gym.envs.realm.common.disruptions import DisruptionReport
from crab_gym.envs.realm.common.env import InstanceKind, checked_init
from crab_gym.envs.realm.common.references import optimality_ratio
from crab_gym.envs.realm.ridesharing.disruptions import DISRUPTION_KINDS, disruption_to_json, parse_disruption
from crab_gym.envs.realm.ridesharing.env import RideSharingEnv
from crab_gym.envs.realm.ridesharing.formats import load_p4, shipped_p4_names
from crab_gym.envs.realm.ridesharing.model import P3Instance, P4Instance
from crab_gym.envs.realm.ridesharing.network import active_at
from crab_gym.envs.realm.ridesharing.references import adaptation_reference, p4_reference
from crab_gym.envs.realm.ridesharing.sim import RideSim, hhmm

DEFAULT_INSTANCE = "p4_small_01"

#: What ``instance`` accepts (checked, and explained when wrong); a P3 instance runs
#: without disruptions.
INSTANCE_KIND = InstanceKind(
    problem="P4",
    types=(P4Instance, P3Instance),
    names=shipped_p4_names,
    list_all="crab_gym.datasets.list_instances('P4')",
    examples=("p4_small_01", "p4_medium_01", "p4_large_05"),
    files="a path to a JSON file (crab_gym's format or an upstream REALM-Bench P3/P4 file)",
)


class RideSharingDisruptionEnv(RideSharingEnv):
    """Realm-P4-v0 (see the module docstring)."""

    problem = "p4"
    #: The disruption types this env knows (the disruption protocol).
    disruption_kinds = DISRUPTION_KINDS

    @checked_init
    def __init__(
        self,
        instance: str | Path | P3Instance | None = None,
        *,
        render_mode: str | None = None,
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
        adaptation_reference: Literal["resolve", "oracle"] = "resolve",
    ) -> None:
        if adaptation_reference not in ("resolve", "oracle"):
            raise ValueError(f"adaptation_reference must be 'resolve' or 'oracle', got {adaptation_reference!r}")
        self.adaptation_mode = adaptation_reference
        self._reset_p4_fields()
        super().__init__(
            DEFAULT_INSTANCE if instance is None else instance,
            render_mode=render_mode,
            invalid_action_penalty=invalid_action_penalty,
            progress_weight=progress_weight,
            optimality_weight=optimality_weight,
        )
        L = len(self.instance.locations)
        self.observation_space = gym.spaces.Dict(
            {**self.observation_space.spaces, "disrupted_roads": gym.spaces.MultiBinary((L, L))}
        )

    # ================================================================== setup
    @staticmethod
    def _load(instance: Any) -> P4Instance:
        return INSTANCE_KIND.load(instance, load_p4)

    def _schedule(self) -> list[Any]:
        return list(self.instance.disruptions)

    def _reset_p4_fields(self) -> None:
        self._injected: list[Any] = []
        self._injected_after_snapshot: list[Any] = []
        self._snapshot: RideSim | None = None
        self._snapshot_keep: dict[int, list[int]] | None = None
        self._fired: list[dict[str, Any]] = []
        self._paused = False
        self._pending_plan: dict[str, list[str]] = {}

    def _on_reset(self) -> None:
        self._reset_p4_fields()

    # ================================================================== disruptions
    def parse_disruption(self, disruption: Any) -> Any:
        """A typed disruption from a mapping (or a typed one), checked against this instance.

        Raises :class:`~crab_gym.envs.realm.common.disruptions.InvalidDisruptionError` for an
        unknown road or place, a negative duration or delay, or an unknown type.
        """
        return parse_disruption(disruption, self.instance)

    def apply_disruption(self, disruption: Any) -> DisruptionReport:
        """Inject a disruption (a typed model or a mapping with ``type``, ``route`` or
        ``location``, ``start`` minute or None for now, ``duration``, ``delay``).

        It is applied at once if its start has come (a start in the past counts from now and
        still ends when it would have), otherwise when the clock reaches it. Returns what
        happened. Raises :class:`~crab_gym.envs.realm.common.disruptions.InvalidDisruptionError`
        as :meth:`parse_disruption` does.
        """
        d = self.parse_disruption(disruption)
        clock = self.sim.clock
        if clock is None:
            return {"applied": False, "scheduled": False, "clock": -1, "message": "the episode is over"}
        if d.start is None:
            d = d.with_start(clock)
        self._injected.append(d)
        if self._snapshot is not None:
            self._injected_after_snapshot.append(d)
        self._final = None
        before = len(self.sim.applied)
        self.sim.inject(d)
        self._settle()
        applied = len(self.sim.applied) > before
        msg = (
            f"applied at {hhmm(clock)}: {d.describe()}"
            if applied
            else f"scheduled: {d.describe()} (applies when the clock reaches {hhmm(d.start)})"
        )
        if not applied:
            self._events.append(msg)
        return {"applied": applied, "scheduled": not applied, "clock": int(clock), "message": msg,
                "disruption": disruption_to_json(d)}

    def disruption_targets(self) -> dict[str, Any]:
        """Where disruptions may strike here: ``routes`` ("a-b", one per road), ``locations``,
        and the ``window`` of start minutes that matter (vehicles' start .. last dropoff)."""
        inst = self.instance
        routes = [
            f"{a}-{b}"
            for i, a in enumerate(inst.locations)
            for j, b in enumerate(inst.locations)
            if i < j and (inst.roads[i][j] is not None or inst.roads[j][i] is not None)
        ]
        return {"routes": routes, "locations": list(inst.locations), "window": (inst.start_time, inst.horizon)}

    def _on_disruption(self, sim: RideSim, fired: list[Any]) -> None:
        for d in fired:
            self._fired.append(disruption_to_json(d))
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
        self._events.append(
            "plan paused by a disruption; submit the plan again (or a new one)" if self._paused else "plan carried out"
        )

    def _act_dispatch(self, vehicle: str, stop: str) -> None:
        self._paused, self._pending_plan = False, {}
        super()._act_dispatch(vehicle, stop)

    def _act_park(self, vehicle: str) -> None:
        self._paused, self._pending_plan = False, {}
        super()._act_park(vehicle)

    def _active_disruptions(self) -> list[Any]:
        clock = self.sim.clock
        if clock is None:
            return []
        return list(active_at(self.sim.applied, clock))

    # ================================================================== CrabEnv hooks
    def _get_obs(self) -> dict[str, Any]:
        obs = super()._get_obs()
        inst = self.instance
        flags = np.zeros((len(inst.locations),) * 2, dtype=np.int8)
        for d in self._active_disruptions():
            for i, j in d.roads(inst.index, inst.locations):
                flags[i, j] = 1
        obs["disrupted_roads"] = flags
        return obs

    def _extra_info(self) -> dict[str, Any]:
        info = super()._extra_info()
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
    def faced_schedule(self) -> list[Any]:
        """The disruptions this episode faces: the instance's plus the injected ones."""
        return list(self.instance.disruptions) + list(self._injected)

    def reference(self) -> dict[str, Any]:
        """The adaptive oracle's reference facing this episode's disruptions."""
        return p4_reference(self.instance, self.faced_schedule())

    def _solution(self) -> dict[str, Any]:
        out = super()._solution()
        out["disruptions"] = [json.loads(d.model_dump_json()) for d in self.sim.applied]
        return out

    def _metrics(self, reference_cost: float) -> dict[str, Any]:
        metrics = super()._metrics(reference_cost)
        feasible = not self.sim.violations
        cost = metrics["cost"]
        ref_value: float | None = None
        if self._snapshot is None:
            adaptation = 1.0 if feasible else 0.0
        elif self.adaptation_mode == "oracle":
            ref_value = float(reference_cost)
            adaptation = optimality_ratio(ref_value, cost, feasible)
        else:
            schedule = list(self._snapshot.pending) + list(self._injected_after_snapshot)
            ref_value = float(adaptation_reference(self._snapshot, schedule, self._snapshot_keep)["value"])
            adaptation = optimality_ratio(ref_value, cost, feasible)
        metrics["adaptation"] = adaptation
        metrics["adaptation_reference_cost"] = ref_value
        metrics["disruptions_applied"] = len(self.sim.applied)
        return metrics
