"""Realm-P8-v0: wedding logistics with road disruptions (closures and traffic delays that
strike at given minutes during the episode).

The env is :class:`WeddingDisruptionEnv`; its docstring is the reference. It implements the
disruption protocol of :mod:`crab_gym.envs.realm.common.disruptions`, which is all
``DisruptionWrapper`` relies on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from crab_gym.envs.realm.common.disruptions import (
    DisruptionReport,
    checked_adaptation_reference,
    episode_over_report,
    inject_and_report,
)
from crab_gym.envs.realm.common.env import checked_init
from crab_gym.envs.realm.common.instance_source import SizedGenerator
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.common.references import NOT_APPLICABLE, Reference, optimality_ratio
from crab_gym.envs.realm.wedding.disruptions import DISRUPTION_KINDS, disruption_to_json, parse_disruption
from crab_gym.envs.realm.wedding.env import WeddingEnv, instance_kind
from crab_gym.envs.realm.wedding.formats import load_p8, shipped_p8_names
from crab_gym.envs.realm.wedding.generator import generate_p8
from crab_gym.envs.realm.wedding.model import P8Instance, WeddingInstance
from crab_gym.envs.realm.wedding.network import active_at
from crab_gym.envs.realm.wedding.references import adaptation_value, p8_reference
from crab_gym.envs.realm.wedding.sim import WeddingSim, hhmm

DEFAULT_INSTANCE = "p8_small_00"
INSTANCE_KIND = instance_kind("P8", (P8Instance, WeddingInstance), shipped_p8_names)
GENERATOR = SizedGenerator(generate_p8, {"n_guests": 3, "n_errands": 3, "n_vehicles": 2})


class WeddingDisruptionEnv(WeddingEnv):
    """Wedding logistics with disruptions (REALM-Bench P8): P5's pickups and errands while
    roads close and traffic slows at given minutes; plans must adapt when they do.

    ## Description

    Everything of :class:`~crab_gym.envs.realm.wedding.env.WeddingEnv` (Realm-P5-v0) holds,
    plus a schedule of road disruptions (:mod:`crab_gym.envs.realm.wedding.disruptions`):

    | type | where | effect while active (``start <= t < start + duration``) |
    |---|---|---|
    | ``road_closure`` | ``route`` "a-b" | passable again when it reopens (a trip departing at ``t`` pays ``end - t`` more on it, or goes round) |
    | ``traffic_delay`` | ``route`` "a-b" | ``delay`` minutes more on that road |

    A disruption applies when the clock reaches its start (the instance's own, and any given
    to :meth:`apply_disruption`); from then on trips that depart while it is active pay it, so
    the observation's travel times, the masks and the costs reflect it. A trip under way is
    not affected.

    ## Action Space

    As Realm-P5-v0, except that **submit_plan pauses at a disruption**: the plan is driven
    until a disruption is applied while stops remain; ``info["paused"]`` is then true and
    ``info["pending_plan"]`` holds the rest. Resubmitting may repeat the stops already served
    (they are skipped) or list only what comes next.

    ## Observation Space

    Realm-P5-v0's, plus ``disrupted_roads`` (``(L, L)`` MultiBinary: 1 where a disruption in
    force now strikes the road from place i to place j).

    ## Rewards

    As Realm-P5-v0; optimality compares with the P8 reference facing the disruptions this
    episode faced: the best of the adaptive oracle (the P5 reference plan, re-solved from the
    state at each disruption), the P5 reference plan kept unchanged, the greedy policy, and a
    local search from the best of them that knows the disruptions.

    ## Episode End

    As Realm-P5-v0. ``info["metrics"]`` also holds ``adaptation`` (0 if the final plan breaks
    a constraint, else ``min(1, reference / cost)`` where the reference is the better of the
    adaptive oracle taking over from the episode's own state at its first disruption and
    keeping the plan followed then to the end; ``None``, not applicable, when no disruption
    struck before the episode ended), ``adaptation_reference_cost`` and ``disruptions_applied``;
    ``info["solution"]`` adds the ``disruptions`` applied. Every step's ``info`` also has
    ``disruptions`` (applied during the step), ``active_disruptions``, ``paused`` and
    ``pending_plan``. ``coordination`` is P5's, priced at undisrupted travel times.

    ## Arguments

    Those of Realm-P5-v0 (shipped ``p8_*`` names, default ``"p8_small_00"``; P8 or P5 files and
    instances, a P5 one running without disruptions; ``generator`` draws P8 instances), plus
    ``adaptation_reference``: ``"deferred"`` (default: the re-solve above, run by
    ``finish_adaptation()`` after the episode -- the evaluation runner calls it; the last
    ``info["metrics"]`` says ``adaptation_pending`` -- never inside ``step()``), ``"resolve"``
    (the same, inside the last ``step()``) or ``"oracle"`` (the P8 reference's value; no solver
    call at the end of an episode).

    ## Version History

    * v0: Initial version.
    """

    problem = "p8"
    generator_kind = GENERATOR
    disruption_kinds = DISRUPTION_KINDS

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | WeddingInstance | None = None, *, generator: dict | None = None,
        adaptation_reference: Literal["deferred", "resolve", "oracle"] = "deferred", **options: Any,
    ) -> None:
        self.adaptation_mode = checked_adaptation_reference(adaptation_reference)
        super().__init__(DEFAULT_INSTANCE if instance is None else instance, generator=generator, **options)

    def _observation_spaces(self, inst: WeddingInstance) -> dict[str, gym.Space]:
        L = len(inst.places)
        return {**super()._observation_spaces(inst), "disrupted_roads": gym.spaces.MultiBinary((L, L))}

    def _load_instance(self, spec: Any) -> P8Instance:
        return INSTANCE_KIND.load(spec, load_p8)

    def _schedule(self) -> list[Any]:
        return list(self.instance.disruptions)

    def _restart(self) -> None:
        self._injected: list[Any] = []
        self._injected_after_snapshot: list[Any] = []
        self._snapshot: WeddingSim | None = None
        self._snapshot_keep: dict[int, list[int]] | None = None
        self._fired: list[dict[str, Any]] = []
        self._paused = False
        self._pending_plan: dict[str, list[str]] = {}
        self._forget_reference()
        super()._restart()

    # ================================================================== disruption protocol
    def parse_disruption(self, disruption: Any) -> Any:
        """A typed disruption from a mapping (or a typed one), checked against this instance."""
        return parse_disruption(disruption, self.instance)

    def apply_disruption(self, disruption: Any) -> DisruptionReport:
        """Inject a disruption (``type``, ``route``, ``start`` minute or None for now,
        ``duration``, ``delay``): applied at once if its start has come, else when the clock
        reaches it. Raises ``InvalidDisruptionError`` for an unknown type or road."""
        d = self.parse_disruption(disruption)
        clock = self.sim.clock
        if clock is None:
            return episode_over_report()
        if d.start is None:
            d = d.with_start(clock)
        self._injected.append(d)
        if self._snapshot is not None:
            self._injected_after_snapshot.append(d)
        self._forget_reference()
        return inject_and_report(self, d, clock, disruption_to_json(d), self._events)

    def disruption_targets(self) -> dict[str, Any]:
        """Where disruptions may strike: ``routes`` (one per road), ``locations`` and the
        ``window`` of start minutes that matter (first vehicle free .. deadline)."""
        inst = self.instance
        routes = [f"{inst.places[i]}-{inst.places[j]}" for i, j in inst.network.roads()]
        first = min(v.available for v in inst.vehicles)
        return {"routes": routes, "locations": list(inst.places), "window": (first, inst.deadline)}

    def faced_schedule(self) -> list[Any]:
        """The disruptions this episode faces: the instance's plus the injected ones."""
        return list(self.instance.disruptions) + list(self._injected)

    def _on_disruption(self, sim: WeddingSim, fired: list[Any]) -> None:
        self._forget_reference()
        for d in fired:
            self._fired.append(disruption_to_json(d))
            self._events.append(f"disruption at {hhmm(d.start)}: {d.describe()}")
        if self._snapshot is None and any(d.duration > 0 for d in fired):
            self._snapshot = sim.copy()

    def _run_plan(self, plan: dict[int, list[int]]) -> None:
        first = self._snapshot is None
        remaining, _ = self.sim.run_plan(plan, pause_on_disruption=True, on_disruption=self._on_disruption)
        if first and self._snapshot is not None:
            self._snapshot_keep = {v: list(q) for v, q in remaining.items()}
        self._paused = bool(remaining) and not self.sim.done
        self._pending_plan = {self.vehicle_ids[v]: [self.stop_names[s] for s in q] for v, q in remaining.items()}
        self._events.append("plan paused by a disruption; submit the plan again (or a new one)"
                            if self._paused else "plan carried out")

    def _act_drive(self, vehicle: str, stop: str) -> None:
        self._paused, self._pending_plan = False, {}
        super()._act_drive(vehicle, stop)

    def _act_wait(self, vehicle: str) -> None:
        self._paused, self._pending_plan = False, {}
        super()._act_wait(vehicle)

    def _act_finish(self, vehicle: str) -> None:
        self._paused, self._pending_plan = False, {}
        super()._act_finish(vehicle)

    def _active_disruptions(self) -> list[Any]:
        clock = self.sim.clock
        return [] if clock is None else list(active_at(self.sim.applied, clock))

    # ================================================================== CrabEnv hooks
    def _get_obs(self) -> dict[str, Any]:
        obs = super()._get_obs()
        inst = self.instance
        flags = np.zeros((len(inst.places),) * 2, dtype=np.int8)
        for d in self._active_disruptions():
            pair = d.pair(inst.places)
            if pair is not None:
                flags[pair[0], pair[1]] = flags[pair[1], pair[0]] = 1
        obs["disrupted_roads"] = flags
        return obs

    def _extra_info(self) -> dict[str, Any]:
        info = super()._extra_info()
        fired, self._fired = self._fired, []
        info.update({
            "disruptions": fired,
            "active_disruptions": [d.describe() for d in self._active_disruptions()],
            "paused": bool(self._paused),
            "pending_plan": {k: list(v) for k, v in self._pending_plan.items()},
        })
        return info

    # ================================================================== results
    def _solve_reference(self) -> Reference:
        return p8_reference(self.instance, self.faced_schedule())

    def _solution(self) -> dict[str, Any]:
        out = super()._solution()
        out["disruptions"] = [disruption_to_json(d) for d in self.sim.applied]
        return out

    def _coordination_yardsticks(self) -> tuple[float | None, float | None]:
        """P5's: the plain problem's single-vehicle and best known costs."""
        extra = self.reference.extra
        return extra.get("solo_value"), extra.get("initial_value")

    def _metrics(self) -> dict[str, Any]:
        metrics = super()._metrics()
        feasible, cost = self._plan_feasible(), metrics["cost"]
        ref_value: float | None = None
        adaptation: float | None
        if self._snapshot is None:
            adaptation = NOT_APPLICABLE  # no disruption struck before the episode ended
        elif self.adaptation_mode == "oracle":
            ref_value = metrics["reference_cost"]
            adaptation = optimality_ratio(ref_value, cost, feasible)
        elif self._defer_adaptation():
            adaptation = NOT_APPLICABLE  # finish_adaptation() solves it
        else:
            schedule = list(self._snapshot.pending) + list(self._injected_after_snapshot)
            ref_value = float(adaptation_value(self._snapshot, schedule, self._snapshot_keep))
            adaptation = optimality_ratio(ref_value, cost, feasible)
        metrics["adaptation"] = adaptation
        metrics["adaptation_reference_cost"] = ref_value
        metrics["disruptions_applied"] = len(self.sim.applied)
        return metrics
