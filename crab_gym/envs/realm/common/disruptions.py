"""The disruption protocol: what an env offers so that generic code can inject disruptions.

A problem with disruptions (P4 now; P7-P10 later) keeps its own typed disruption models and
their effects. Generic code -- :class:`~crab_gym.wrappers.disruption.DisruptionWrapper`, a
benchmark runner -- speaks to the env only through :class:`DisruptiveEnv` and the plain
mapping shape of a disruption below, so it never imports a problem family.

A disruption as a mapping (what users write and what ``info`` reports)::

    {"type": "traffic_delay", "route": "a-b", "start": 480, "duration": 60, "delay": 20}
    {"type": "accident", "location": "a", "start": None, "duration": 45, "delay": 15}

``type`` names one of the env's :attr:`~DisruptiveEnv.disruption_kinds`; the kind says
whether the disruption strikes a ``route`` ("a-b") or a ``location`` and whether it carries a
``delay`` (minutes). ``start`` is a minute from midnight (``None``: now), ``duration`` minutes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Protocol, TypedDict, runtime_checkable

from crab_gym.envs.realm.common.env import hhmm


class InvalidDisruptionError(ValueError):
    """A disruption that cannot apply to an instance (unknown type, road or place; bad numbers)."""


@dataclass(frozen=True)
class DisruptionKind:
    """How a disruption of one type is written: where it strikes, whether it has a delay."""

    strikes: Literal["route", "location"]
    has_delay: bool = True


class DisruptionReport(TypedDict):
    """What :meth:`DisruptiveEnv.apply_disruption` returns."""

    applied: bool  # in force now (its start has come)
    scheduled: bool  # waiting for the clock to reach its start
    clock: int  # the env's clock when it was given (-1: the episode is over)
    message: str  # what happened, in words (also in ``info["events"]`` when scheduled)
    disruption: NotRequired[dict[str, Any]]  # as the env registered it (start filled in)


#: The members of :class:`DisruptiveEnv`, for error messages.
PROTOCOL_MEMBERS = ("disruption_kinds", "parse_disruption", "apply_disruption", "disruption_targets", "faced_schedule")


@runtime_checkable
class DisruptiveEnv(Protocol):
    """An env whose episodes can face disruptions, and lets others add some.

    The env owns the semantics: a disruption applies when its clock reaches the start (at
    once if that has passed), and from then on its observation, masks, costs and ``info``
    reflect it; its adaptation metric scores the replan.
    """

    #: The disruption types it knows, in a fixed order (the random process draws in it).
    disruption_kinds: Mapping[str, DisruptionKind]

    def parse_disruption(self, disruption: Any) -> Any:
        """A typed disruption from a mapping (or a typed one), checked against the current
        instance; raises :class:`InvalidDisruptionError` saying what is wrong."""
        ...

    def apply_disruption(self, disruption: Any) -> DisruptionReport:
        """Add a disruption to the episode: applied now if its start has come, else when the
        clock reaches it."""
        ...

    def disruption_targets(self) -> Mapping[str, Any]:
        """Where disruptions may strike: ``routes`` ("a-b"), ``locations``, the ``window``
        ``(first, last)`` of start minutes that matter, and optionally ``locations_by_kind``
        (``{type: [...]}``) for types that strike only some of the locations."""
        ...

    def faced_schedule(self) -> list[Any]:
        """The disruptions this episode faces: the instance's own plus those applied."""
        ...


#: How an env with disruptions scores adaptation. Against the oracle re-solving from the
#: episode's own state at its first disruption: ``"deferred"`` (the default) leaves that
#: solve out of ``step()`` -- the episode's last ``info["metrics"]`` says
#: ``adaptation_pending`` and ``env.unwrapped.finish_metrics()`` (which the evaluation
#: runner calls) runs it; ``"resolve"`` runs it inside the last ``step()``, as before. Or
#: ``"oracle"``: against the stored adaptive reference's value (no solver at all).
AdaptationReference = Literal["deferred", "resolve", "oracle"]
ADAPTATION_MODES = ("deferred", "resolve", "oracle")


def checked_adaptation_reference(value: Any) -> str:
    """The checked ``adaptation_reference`` argument."""
    if value not in ADAPTATION_MODES:
        raise ValueError(f"adaptation_reference must be one of {', '.join(map(repr, ADAPTATION_MODES))}, got {value!r}")
    return str(value)


def disruption_report(applied: bool, clock: int, message: str, disruption: dict[str, Any]) -> DisruptionReport:
    """What :meth:`DisruptiveEnv.apply_disruption` returns for a disruption it accepted:
    ``applied`` now, else scheduled for when the clock reaches its start."""
    return {"applied": applied, "scheduled": not applied, "clock": int(clock), "message": message,
            "disruption": disruption}


def inject_and_report(env: Any, disruption: Any, now: int, payload: dict[str, Any],
                      events: list[str]) -> DisruptionReport:
    """Hand an accepted disruption to ``env.sim`` and settle the env (``env._settle()``): it is
    applied now if the clock has reached its start, else scheduled (a note joins ``events``,
    the step's event lines). The report of :meth:`DisruptiveEnv.apply_disruption`."""
    before = len(env.sim.applied)
    env.sim.inject(disruption)
    env._settle()
    applied = len(env.sim.applied) > before
    what = disruption.describe()
    message = (f"applied at {hhmm(now)}: {what}" if applied
               else f"scheduled: {what} (applies when the clock reaches {hhmm(disruption.start)})")
    if not applied:
        events.append(message)
    return disruption_report(applied, now, message, payload)


def episode_over_report() -> DisruptionReport:
    """What :meth:`DisruptiveEnv.apply_disruption` returns once the episode is over."""
    return {"applied": False, "scheduled": False, "clock": -1, "message": "the episode is over"}


def missing_members(env: Any) -> list[str]:
    """The :class:`DisruptiveEnv` members ``env`` lacks ([] if it supports disruptions)."""
    return [name for name in PROTOCOL_MEMBERS if not hasattr(env, name)]
