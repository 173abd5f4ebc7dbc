"""Realm-P9-v0: Thanksgiving dinner with flight delays (REALM-Bench P9).

The env is :class:`ThanksgivingDelaysEnv`; its docstring is the reference. It implements the
disruption protocol of :mod:`crab_gym.envs.realm.common.disruptions` (a flight delay strikes
a flight, named as its ``location``), which is all ``DisruptionWrapper`` relies on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from gymnasium import spaces

from crab_gym.envs.realm.common.disruption_env import DisruptedRealmEnv
from crab_gym.envs.realm.common.disruptions import (
    DisruptionKind,
    DisruptionReport,
    InvalidDisruptionError,
    disruption_report,
)
from crab_gym.envs.realm.common.env import checked_init, clipped, hhmm
from crab_gym.envs.realm.common.instance_source import InstanceSource, SizedGenerator, files_kind
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.thanksgiving.env import GENERATOR_COUNTS, ThanksgivingEnv
from crab_gym.envs.realm.thanksgiving.formats import FILES, load_p9
from crab_gym.envs.realm.thanksgiving.generator import generate_p9
from crab_gym.envs.realm.thanksgiving.model import FlightDelay, ThanksgivingInstance
from crab_gym.envs.realm.thanksgiving.references import p9_reference
from crab_gym.envs.realm.thanksgiving.replan import best_continuation
from crab_gym.envs.realm.thanksgiving.scoring import optimality

DEFAULT_INSTANCE = "p9_small_00"
#: The ``instance`` and ``generator`` arguments of Realm-P9-v0 (drawn instances have delays).
SOURCE = InstanceSource(files_kind(FILES["P9"]), load_p9, SizedGenerator(generate_p9, GENERATOR_COUNTS, "p9"), DEFAULT_INSTANCE)
#: The one disruption type: a flight (its id as ``location``) lands ``delay`` minutes late,
#: announced at ``start``.
DISRUPTION_KINDS = {"flight_delay": DisruptionKind(strikes="location", has_delay=True)}


class ThanksgivingDelaysEnv(DisruptedRealmEnv, ThanksgivingEnv):
    """Thanksgiving dinner while flights are delayed (REALM-Bench P9): P6's afternoon, but some
    flights land late, and the family learns it only when the delay is announced.

    ## Description

    Everything of Realm-P6-v0 holds (see :class:`~crab_gym.envs.realm.thanksgiving.env.ThanksgivingEnv`),
    plus the instance's flight delays: delay `d` of a flight lands it `delay` minutes after
    its scheduled arrival and is announced at minute `announced`. Before the announcement
    the observation shows the scheduled landing; a car waiting at the airport waits for the
    real one. Delays can also be injected (`apply_disruption`, what `DisruptionWrapper`
    calls): `{"type": "flight_delay", "location": "flight1", "start": minute, "delay": 40}`
    (`start`: when it is announced, None for now; a flight that has landed cannot be delayed).

    ## Action Space

    As Realm-P6-v0, except that **submit_plan pauses at an announcement**: the plan is carried
    out until a delay is announced while entries remain; the episode then waits for the next
    action (`info["paused"]` is true and `info["pending_plan"]` holds the entries left).
    Resubmitting may repeat the trips and tasks under way (they are kept) or list only what
    comes next.

    ## Observation Space

    Realm-P6-v0's, plus `member_delay` (M,): the delay known now of each traveller's flight.

    ## Rewards

    As Realm-P6-v0; optimality compares with the P9 reference, the best plan known for the
    afternoon as it happens: CP-SAT's plan with every delay known from the start (a plan
    submitted at the start is carried out as written, so no other reference would be the best
    known). No policy without foresight reaches 1 where a delay costs; `adaptation` measures
    how well it replans.

    ## Episode End

    As Realm-P6-v0 (a paused plan does not end it). `info["metrics"]` also holds
    `adaptation`: None (does not apply) when no delay was announced before the episode ended;
    0 if the afternoon breaks a rule; else the optimality rule of Realm-P6-v0 with the better
    of the adaptive oracle and the greedy policy taking over from the episode's own state at
    its first announcement as the best (`(baseline - cost) / (baseline - best)` clipped to
    [0, 1]), plus `adaptation_reference_cost` and `delays_announced`. Every step's `info` also has
    `announced` (delays announced so far, in words), `disruptions` (each delay once, as JSON,
    in the first `info` after its announcement, as the other envs with disruptions report
    them; the runner counts them), `paused` and `pending_plan`.

    ## Arguments

    Those of Realm-P6-v0 (`instance` takes shipped `p9_*` names, default `"p9_small_00"`,
    P9 files and instances; an instance without delays, such as `load_p6("p6_small_00")`, runs without them; `generator` draws P9
    instances), plus:

    | argument | meaning |
    |---|---|
    | `adaptation_reference` | `"deferred"` (default): the same re-solve, run by `finish_metrics()` after the episode (the evaluation runner calls it; the last `info["metrics"]` says `adaptation_pending`), never inside `step()`; `"resolve"`: the re-solve from the episode's own state, as above, inside the last `step()`; `"oracle"`: the best afternoon without foresight from the start, stored with the P9 reference (`adaptive_value`; no solver call at the end of an episode) |

    ## Version History

    * v0: initial version.
    """

    instance_source: ClassVar[Any] = SOURCE
    env_name = "realm-p9"
    disruption_kinds = DISRUPTION_KINDS

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | ThanksgivingInstance = DEFAULT_INSTANCE, *,
        generator: dict | Callable[..., Any] | None = None, adaptation_reference: Literal["deferred", "resolve", "oracle"] = "deferred",
        **options: Any,
    ) -> None:
        self._init_disruptions(adaptation_reference)
        super().__init__(instance, generator=generator, **options)
        M = len(self.instance.members)
        self.observation_space = spaces.Dict(
            {**self.observation_space.spaces, "member_delay": spaces.Box(0.0, 2880.0, (M,), np.float32)}
        )

    # ================================================================== instances and delays
    def _delays(self, inst: ThanksgivingInstance) -> list[FlightDelay]:
        return list(inst.delays)

    def _restart(self) -> None:
        self._clear_disruptions()  # the injected delays are gone
        super()._restart()
        self._reported = 0  # announced delays already in an info's "disruptions"

    def _own_disruptions(self) -> list[FlightDelay]:
        return self._delays(self.instance)

    def _solve_reference(self) -> Reference:
        inst = self.instance
        if self._injected:
            inst = ThanksgivingInstance.model_validate(
                {**inst.model_dump(), "delays": [d.model_dump() for d in self.faced_schedule()]}
            )
            return p9_reference(inst)
        return self.yardstick.memo("reference", lambda: p9_reference(inst))

    # ================================================================== the disruption protocol
    def parse_disruption(self, disruption: Any) -> FlightDelay:
        """A flight delay from a mapping (``type``, ``location``: the flight, ``start``: when it
        is announced or None for now, ``delay``) or a :class:`FlightDelay`."""
        if isinstance(disruption, FlightDelay):
            d = disruption
        else:
            if not isinstance(disruption, dict):
                raise InvalidDisruptionError(f"a disruption is a mapping, got {type(disruption).__name__}")
            if disruption.get("type") != "flight_delay":
                raise InvalidDisruptionError(f"unknown disruption type {disruption.get('type')!r}; known: flight_delay")
            flight = disruption.get("location", disruption.get("flight"))
            start = disruption.get("start")
            delay = disruption.get("delay")
            if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= 24 * 60:
                raise InvalidDisruptionError(f"delay must be whole minutes in 0..1440, got {delay!r}")
            if start is not None and (not isinstance(start, int) or isinstance(start, bool) or start < 0):
                raise InvalidDisruptionError(f"start must be a minute from midnight or None, got {start!r}")
            now = self.kitchen.now
            d = FlightDelay(flight=str(flight), delay=delay, announced=now if start is None else start)
        if d.flight not in self.instance.flight_arrival:
            raise InvalidDisruptionError(f"unknown flight {d.flight!r}; flights: {', '.join(self.instance.flight_arrival)}")
        return d

    def _disruption_clock(self) -> int | None:
        return None if self._terminated else self.kitchen.now

    def _schedule_disruption(self, d: FlightDelay, now: int) -> FlightDelay:
        """Announced at its ``start``, now if that has passed. Raises
        :class:`InvalidDisruptionError` for a flight that has landed."""
        k = self.kitchen
        landing = self.instance.flight_arrival[d.flight] + sum(x.delay for x in k.true_delays if x.flight == d.flight)
        if landing <= now:
            raise InvalidDisruptionError(f"{d.flight} has landed at {hhmm(landing)}; it cannot be delayed")
        return d.model_copy(update={"announced": max(d.announced, now)})

    def _inject(self, d: FlightDelay, now: int) -> DisruptionReport:
        """It is real at once (a car at the airport waits for the new landing)."""
        k = self.kitchen
        k.delay_flight(d)
        applied = d.announced <= k.now
        if applied:
            self._events += k.catch_up()
        msg = f"{d.describe()}, announced at {hhmm(d.announced)}"
        return disruption_report(applied, k.now, msg, {"type": "flight_delay", "location": d.flight, "start": d.announced,
                                                       "duration": 0, "delay": d.delay})

    def disruption_targets(self) -> dict[str, Any]:
        """Flights that have not landed yet, and the window of announcement minutes that matter."""
        inst, k = self.instance, self.kitchen
        landing = {f.flight_id: f.arrival + sum(d.delay for d in k.true_delays if d.flight == f.flight_id)
                   for f in inst.flights}
        return {"routes": [], "locations": [f for f, t in landing.items() if t > k.now],
                "window": (inst.start_time, max(f.arrival for f in inst.flights))}

    # ================================================================== plans pause at announcements
    def _after_plan(self, remaining: list[Any]) -> None:
        self._paused = bool(remaining)
        self._pending_plan = [
            {"kind": e.kind, "actor": e.actor, "what": list(e.what), "time": hhmm(e.time)} for e in remaining
        ]
        self._submitted = not self._paused
        if self._paused:
            self._events.append("plan paused by a delay announcement; submit a plan again (or act step by step)")

    # ================================================================== observation, info, metrics
    def _get_obs(self) -> dict[str, Any]:
        obs = super()._get_obs()
        k, inst = self.kitchen, self.instance
        known = k.known_landings()  # k.known_landing of each traveller
        obs["member_delay"] = clipped([known[m] - inst.landing(m) if m in known else 0 for m in self._ids[1]], 0, 2880)
        return obs

    def _extra_info(self) -> dict[str, Any]:
        announced = self.kitchen.announced
        fired = [self.disruption_json(d) for d in announced[self._reported:]]
        self._reported = len(announced)
        return {
            **super()._extra_info(),
            "disruptions": fired,
            "announced": [d.describe() for d in announced],
            "paused": bool(self._paused),
            "pending_plan": [dict(e) for e in self._pending_plan],
        }

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        metrics, solution = super()._final_info()
        k, feasible = self.kitchen, metrics["feasible"]
        adaptation, ref_value = self._measure_adaptation(
            lambda best: optimality(self.instance, best, metrics["cost"], feasible, metrics["solo_cost"]))
        metrics.update(adaptation=adaptation, adaptation_reference_cost=ref_value, delays_announced=len(k.announced))
        return metrics, {**solution, "delays": self._delays_announced()}

    def _solution(self) -> dict[str, Any]:
        return {**super()._solution(), "delays": self._delays_announced()}

    def _delays_announced(self) -> list[dict[str, Any]]:
        return [d.model_dump() for d in self.kitchen.announced]

    def _adaptation_state(self) -> Any:
        """The kitchen as the first delay was announced (None: none was)."""
        return self.kitchen.first_announcement

    def _stored_adaptation_value(self) -> float | None:
        return self.reference.extra.get("adaptive_value", self.reference.value)

    def _resolve_adaptation(self) -> float:
        return best_continuation(self.kitchen.first_announcement)
