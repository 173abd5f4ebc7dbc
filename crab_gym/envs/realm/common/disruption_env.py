"""The disruption kit: what every REALM env with disruptions does the same way, written once.

Five envs face disruptions -- Realm-P4 (ridesharing), P7 (disaster relief), P8 (wedding), P9
(Thanksgiving flight delays) and P10 (supply chain). Each derives from
:class:`DisruptedRealmEnv` (directly, or as ``class P4Env(DisruptedRealmEnv, P3Env)`` over the
undisrupted family env), which owns:

* **The faced schedule**: the instance's own disruptions plus those injected this episode
  (:meth:`~DisruptedRealmEnv.faced_schedule`), cleared at every reset
  (:meth:`~DisruptedRealmEnv._clear_disruptions`), and the reference solved facing it.
* **Injection** (the protocol of :mod:`crab_gym.envs.realm.common.disruptions`, which
  ``DisruptionWrapper`` speaks): :meth:`~DisruptedRealmEnv.parse_disruption` and
  :meth:`~DisruptedRealmEnv.apply_disruption` -- parse, refuse once the episode is over, put
  the disruption in time, record it, forget the reference, hand it to the simulation.
* **The clock passing**: each disruption that fires is reported once in ``info["disruptions"]``
  (as JSON) with an event line, those in force in ``info["active_disruptions"]``; the state
  when the first one struck is kept (the **snapshot**, with the plan being followed then);
  a submitted plan that a disruption paused is ``info["paused"]`` / ``info["pending_plan"]``.
* **Adaptation** (:meth:`~DisruptedRealmEnv._measure_adaptation`): not applicable (None)
  when no disruption struck; else a yardstick cost by the ``adaptation_reference`` mode --
  ``"oracle"``: a value stored with the reference; ``"deferred"`` (default): none yet, the
  episode's metrics say ``adaptation_pending`` and ``finish_metrics()`` runs the re-solve;
  ``"resolve"``: the family's re-solve from the snapshot, now (once per episode) -- then the
  family's score of the plan's cost against it.

The family supplies small hooks:

=================================  ==============================================================
hook                               what the family says
=================================  ==============================================================
``disruption_kinds``               the types it knows (the protocol)
``disruption_parser``              ``(mapping or typed, instance) -> typed``, raising
                                   ``InvalidDisruptionError`` (or override ``parse_disruption``)
``faced_reference``                ``(instance, schedule) -> Reference``: the reference facing
                                   the episode's disruptions (or override ``_solve_reference``)
``disruption_targets()``           where disruptions may strike (the protocol)
``_disruption_clock()``            the clock now; None once the episode is over
``_schedule_disruption(d, now)``   ``d`` put in time (default: a ``start`` of None becomes now)
``_inject(d, now)``                hand it to the simulation and report (default:
                                   :func:`~.disruptions.inject_and_report` on ``self.sim``)
``disruption_json``                ``d -> dict``: a disruption as ``info`` reports it (default:
                                   its pydantic JSON form)
``_fired_event(d)``                the event line of a disruption that fired
``_active_disruptions()``          the disruptions in force now
``_stored_adaptation_value()``     the ``"oracle"`` mode's yardstick
``_resolve_adaptation()``          the ``"resolve"`` mode's yardstick: the re-solve from the
                                   snapshot
=================================  ==============================================================

The family calls :meth:`~DisruptedRealmEnv._init_disruptions` in ``__init__``,
:meth:`~DisruptedRealmEnv._clear_disruptions` when it restarts an episode,
:meth:`~DisruptedRealmEnv._note_fired` and :meth:`~DisruptedRealmEnv._take_snapshot` as its
simulation fires disruptions, and puts :meth:`~DisruptedRealmEnv._fired_info` (and, where a
plan can pause, :meth:`~DisruptedRealmEnv._pause_info`) in its ``info``.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from crab_gym.envs.realm.common.disruptions import (
    DisruptionKind,
    DisruptionReport,
    checked_adaptation_reference,
    episode_over_report,
    inject_and_report,
)
from crab_gym.envs.realm.common.env import RealmEnv, hhmm
from crab_gym.envs.realm.common.references import NOT_APPLICABLE, Reference

#: ``_measure_adaptation``'s score: the yardstick's cost -> the adaptation metric.
AdaptationScore = Callable[[Any], "float | None"]


def model_json(d: Any) -> dict[str, Any]:
    """A typed (pydantic) disruption as plain JSON data: the default ``disruption_json``."""
    return json.loads(d.model_dump_json())


def _struck(env: DisruptedRealmEnv) -> bool:
    """Whether a disruption struck the episode (there is a state to measure adaptation from)."""
    return env._adaptation_state() is not None


class DisruptedRealmEnv(RealmEnv):
    """A REALM env whose episodes face disruptions: the schedule, injection, reporting and
    the adaptation metric, with the family's hooks (see the module docstring)."""

    #: The disruption types the env knows, in a fixed order (the disruption protocol).
    disruption_kinds: ClassVar[Mapping[str, DisruptionKind]] = {}
    #: ``(disruption, instance) -> typed disruption`` (set it with ``staticmethod(...)``).
    disruption_parser: ClassVar[Callable[[Any, Any], Any] | None] = None
    #: ``disruption -> dict``: how ``info`` and the solution report one (a ``staticmethod``).
    disruption_json: ClassVar[Callable[[Any], dict[str, Any]]] = staticmethod(model_json)
    #: ``(instance, faced schedule) -> Reference`` (set it with ``staticmethod(...)``).
    faced_reference: ClassVar[Callable[[Any, list[Any]], Reference] | None] = None
    #: ``"deferred"``, ``"resolve"`` or ``"oracle"`` (:data:`~.disruptions.ADAPTATION_MODES`).
    adaptation_mode: str
    adaptation_struck = staticmethod(_struck)

    # ================================================================== episode state
    def _init_disruptions(self, adaptation_reference: Any) -> None:
        """The checked ``adaptation_reference`` argument and an empty disruption state (call
        it first in ``__init__``: the family's set-up may already restart an episode)."""
        self.adaptation_mode = checked_adaptation_reference(adaptation_reference)
        self._empty_disruptions()

    def _clear_disruptions(self) -> None:
        """A new episode: nothing injected, fired, kept or paused; the reference faces the
        instance's own schedule again."""
        self._empty_disruptions()
        self.yardstick.forget()

    def _empty_disruptions(self) -> None:
        """Nothing injected, fired, kept or paused."""
        self._injected: list[Any] = []
        self._injected_after_snapshot: list[Any] = []
        self._snapshot: Any = None
        self._snapshot_keep: Any = None
        self._fired: list[dict[str, Any]] = []
        self._paused = False
        self._pending_plan: dict[str, Any] = {}
        self._resolved: tuple[Any] | None = None  # the "resolve" yardstick, once computed

    def faced_schedule(self) -> list[Any]:
        """The disruptions this episode faces: the instance's own plus those injected."""
        return list(self._own_disruptions()) + list(self._injected)

    def _own_disruptions(self) -> list[Any]:
        """The instance's own schedule."""
        return list(self.instance.disruptions)

    def _solve_reference(self) -> Reference:
        """The reference facing this episode's disruptions."""
        if self.faced_reference is None:
            return super()._solve_reference()
        schedule, lookup = self.faced_schedule(), self.faced_reference
        return self.yardstick.memo("reference", lambda: lookup(self.instance, schedule), *schedule)

    # ================================================================== the disruption protocol
    def parse_disruption(self, disruption: Any) -> Any:
        """A typed disruption from a mapping (or a typed one), checked against this instance.

        Raises :class:`~crab_gym.envs.realm.common.disruptions.InvalidDisruptionError` saying
        what is wrong (an unknown type or target, bad numbers)."""
        if self.disruption_parser is None:
            raise NotImplementedError(f"{type(self).__name__} sets no disruption_parser")
        return self.disruption_parser(disruption, self.instance)

    def apply_disruption(self, disruption: Any) -> DisruptionReport:
        """Add a disruption to the episode: applied now if its start has come (a start in the
        past counts from now), else when the clock reaches it. Returns what happened; raises
        ``InvalidDisruptionError`` as :meth:`parse_disruption` does."""
        d = self.parse_disruption(disruption)
        now = self._disruption_clock()
        if now is None:
            return episode_over_report()
        d = self._schedule_disruption(d, now)
        self._injected.append(d)
        if self._snapshot is not None:
            self._injected_after_snapshot.append(d)
        self.yardstick.forget()  # the reference faces the episode's disruptions
        self._resolved = None
        self._cache.pop("mask", None)  # the disruption may change what is legal now
        return self._inject(d, now)

    @abstractmethod
    def disruption_targets(self) -> dict[str, Any]:
        """Where disruptions may strike: ``routes`` ("a-b"), ``locations`` and the ``window``
        ``(first, last)`` of start minutes that matter."""
        raise NotImplementedError

    # ------------------------------------------------------------------ injection hooks
    def _disruption_clock(self) -> int | None:
        """The clock now (what a ``start`` of None means); None once the episode is over."""
        return self.sim.clock

    def _schedule_disruption(self, d: Any, now: int) -> Any:
        """``d`` put in time: by default a ``start`` of None becomes ``now``."""
        return d.with_start(now) if d.start is None else d

    def _inject(self, d: Any, now: int) -> DisruptionReport:
        """Hand ``d`` to the simulation and say what happened (applied now, or scheduled)."""
        return inject_and_report(self, d, now, self.disruption_json(d), self._events)

    # ================================================================== the clock passing
    def _note_fired(self, fired: list[Any]) -> None:
        """Disruptions just fired: each reported once in ``info["disruptions"]`` and as an
        event line."""
        for d in fired:
            self._fired.append(self.disruption_json(d))
            self._events.append(self._fired_event(d))

    def _fired_event(self, d: Any) -> str:
        """The event line of a disruption that fired."""
        return f"disruption at {hhmm(d.start)}: {d.describe()}"

    def _take_snapshot(self, capture: Callable[[], Any], keep: Any = None) -> None:
        """Keep the state as the first disruption strikes (``capture()``, taken only then) and
        the plan being followed then (``keep``); later strikes keep the first."""
        if self._snapshot is None:
            self._snapshot = capture()
            self._snapshot_keep = keep

    def _active_disruptions(self) -> list[Any]:
        """The disruptions in force now."""
        raise NotImplementedError

    def _fired_info(self) -> dict[str, Any]:
        """``disruptions`` fired since the last ``info`` (as JSON) and ``active_disruptions``
        (in force now, in words)."""
        fired, self._fired = self._fired, []
        active = self._active_disruptions()  # frozen models: their words are worked out once
        if not active:  # most steps: nothing in force, no lookup
            return {"disruptions": fired, "active_disruptions": []}
        words = self.yardstick.memo("active_words", lambda: [d.describe() for d in active], *active)
        return {"disruptions": fired, "active_disruptions": list(words)}

    def _unpause(self) -> None:
        """The agent acted: a plan paused by a disruption no longer waits."""
        self._paused, self._pending_plan = False, {}

    def _pause_info(self) -> dict[str, Any]:
        """``paused`` (a submitted plan waits after a disruption) and its ``pending_plan``."""
        return {"paused": bool(self._paused), "pending_plan": {k: list(v) for k, v in self._pending_plan.items()}}

    # ================================================================== adaptation
    def _adaptation_state(self) -> Any:
        """The state where adaptation is measured from (None: no disruption struck)."""
        return self._snapshot

    def _defer_adaptation(self) -> bool:
        """True (skip the re-solve; the episode's metrics then say ``adaptation_pending``) in
        the ``"deferred"`` mode, unless :meth:`finish_metrics` is running it now."""
        return self.yardstick.defer_adaptation(self.adaptation_mode)

    def _measure_adaptation(self, score: AdaptationScore) -> tuple[float | None, Any]:
        """``(adaptation, yardstick cost)``: ``(None, None)`` when no disruption struck or the
        re-solve is deferred; else ``(score(yardstick), yardstick)``, the yardstick by the
        ``adaptation_reference`` mode (the ``"resolve"`` one computed once per episode)."""
        if self._adaptation_state() is None:
            return NOT_APPLICABLE, None  # no disruption struck before the episode ended
        if self.adaptation_mode == "oracle":
            value = self._stored_adaptation_value()
        elif self._defer_adaptation():
            return NOT_APPLICABLE, None  # finish_metrics() solves it
        else:
            if self._resolved is None:
                self._resolved = (self._resolve_adaptation(),)
            value = self._resolved[0]
        return score(value), value

    def restore_adaptation_start(self) -> bool:
        """Put the episode back in the state the adaptation yardstick re-plans from, so that
        a probe can continue from it with re-planners of its own (the scoring probes); False
        where that state is the episode's own state at the strike (nothing to restore)."""
        return False

    @abstractmethod
    def _stored_adaptation_value(self) -> Any:
        """The ``"oracle"`` mode's yardstick: a value stored with the reference (no solver)."""
        raise NotImplementedError

    @abstractmethod
    def _resolve_adaptation(self) -> Any:
        """The ``"resolve"`` mode's yardstick: the re-solve from :meth:`_adaptation_state`."""
        raise NotImplementedError
