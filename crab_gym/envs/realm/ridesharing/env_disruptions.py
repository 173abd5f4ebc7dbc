"""Realm-P4-v0: ride-sharing with disruptions (P3 plus traffic delays, closures, accidents and
construction that happen at given minutes).

The env is :class:`RideSharingDisruptionEnv`; its docstring is the reference. It implements
the disruption protocol of :mod:`crab_gym.envs.realm.common.disruptions`, which is all
``DisruptionWrapper`` relies on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from crab_gym.envs.realm.common.env import checked_init
from crab_gym.envs.realm.common.fleet.disrupted import FleetDisruptionMixin
from crab_gym.envs.realm.common.instance_source import InstanceSource, SizedGenerator
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.ridesharing.adaptation import adaptation_score, trivial_cost, yardstick_start
from crab_gym.envs.realm.ridesharing.disruptions import DISRUPTION_KINDS, disruption_to_json, parse_disruption
from crab_gym.envs.realm.ridesharing.env import RideSharingEnv, instance_kind
from crab_gym.envs.realm.ridesharing.formats import load_p4, shipped_p4_names
from crab_gym.envs.realm.ridesharing.generator import generate_p4
from crab_gym.envs.realm.ridesharing.model import P3Instance, P4Instance
from crab_gym.envs.realm.ridesharing.references import adaptation_reference, p4_reference, solo_reference
from crab_gym.envs.realm.ridesharing.sim import RideSim

DEFAULT_INSTANCE = "p4_small_01"

#: Where the env's instances come from: ``instance=`` (a P3 instance runs without
#: disruptions) and ``generator=``, as Realm-P3-v0's, drawing P4 instances (disruptions included).
SOURCE = InstanceSource(instance_kind("P4", (P4Instance, P3Instance), shipped_p4_names), load_p4,
                        SizedGenerator(generate_p4, {"n_requests": 5, "n_vehicles": 2, "n_locations": 8}, "p4"),
                        DEFAULT_INSTANCE)


class RideSharingDisruptionEnv(FleetDisruptionMixin, RideSharingEnv):
    """Urban ride-sharing with disruptions (REALM-Bench P4): P3's dial-a-ride problem while
    traffic delays, road closures, accidents and construction strike at given minutes; plans
    must adapt when they do.

    ## Description

    Everything of :class:`~crab_gym.envs.realm.ridesharing.env.RideSharingEnv` (Realm-P3-v0)
    holds, plus a schedule of typed disruptions
    (:mod:`crab_gym.envs.realm.ridesharing.disruptions`):

    | type | where | effect while active (``start <= t < start + duration``) |
    |---|---|---|
    | ``traffic_delay`` | ``route`` "a-b" | ``delay`` minutes more on that road |
    | ``road_closure`` | ``route`` "a-b" | passable again when it reopens (a trip departing at ``t`` pays ``end - t`` more on it, or goes round) |
    | ``accident`` | ``location`` | ``delay`` more on every road touching the place |
    | ``construction`` | ``route`` "a-b" | ``delay`` more on that road |

    A disruption is applied when the clock reaches its start: the instance's own schedule,
    and any passed to :meth:`apply_disruption` (what ``DisruptionWrapper`` calls). From then
    on, and only from then, trips departing while it is active take its delay, so the
    observation's travel times, the action masks and the costs reflect it; a trip already
    under way is not affected.

    ## Action Space

    As Realm-P3-v0 (``dispatch``, ``park``, ``submit_plan``), except that **submit_plan
    pauses at a disruption**: the plan is driven until a disruption is applied while stops
    remain; the episode then waits for a new plan (``info["paused"]`` is true and
    ``info["pending_plan"]`` holds the rest). Resubmitting may repeat the stops already served
    (they are skipped) or list only what comes next.

    ## Observation Space

    Every key of Realm-P3-v0's observation (``travel_time`` holds the minutes in force now),
    plus:

    | key | shape, type | meaning |
    |---|---|---|
    | ``disrupted_roads`` | ``(L, L)`` MultiBinary | 1: a disruption in force now strikes the road from place i to place j |

    ## Rewards

    As Realm-P3-v0; optimality compares with the P4 reference: the best plan known for the
    instance facing the disruptions this episode faced (the cheapest feasible plan among the
    adaptive oracle's, the greedy policy's, the undisrupted P3 plan kept unchanged and the best
    one-vehicle plan, each also improved by a local search that knows the disruptions in
    advance; :mod:`crab_gym.envs.realm.ridesharing.best_known`). The reference plan is that
    best plan (what ``OraclePolicy`` submits); the adaptive oracle, which does not see
    disruptions coming, may score below 1, and its own value is
    ``reference.extra["adaptive_oracle_value"]``.

    ## Starting State

    As Realm-P3-v0; disruptions that start at ``start_time`` are applied at reset.

    ## Episode End

    As Realm-P3-v0. ``info["metrics"]`` also holds ``adaptation``: 0 if the final plan breaks
    a constraint, else the share of the cost avoidable after the first strike that the plan
    avoided, ``(trivial - cost) / (trivial - yardstick)`` clipped to [0, 1]
    (:mod:`crab_gym.envs.realm.ridesharing.adaptation`). Both figures start from the
    episode's state when its first disruption struck (what is done stays done) with every
    parked vehicle back on the road (parking before the strike does not shrink the fleet the
    replan is measured against), facing the same disruptions still to come: ``trivial``
    (``adaptation_trivial_cost``) drops the passengers on board and serves nobody new; the
    yardstick is the best of a portfolio of continuations that never foresee a disruption --
    keeping the rest of the plan being followed then (a submitted plan), the adaptive oracle
    re-solving there and at each later disruption, the greedy rule and seeded random
    continuations (deterministic). ``None`` (not applicable) when nothing is avoidable after
    the strike (``trivial <= yardstick``) or when no disruption struck before the episode
    ended. Also
    ``adaptation_reference_cost`` (the yardstick) and ``disruptions_applied``;
    ``info["solution"]`` adds the ``disruptions`` applied. ``coordination`` is P3's with
    every cost facing this episode's disruptions: ``solo`` is the best one-vehicle plan known
    facing them and the reference the best plan known. Every step's ``info`` also has
    ``disruptions`` (applied during the step), ``active_disruptions`` (in force, in words),
    ``paused`` and ``pending_plan``.

    :attr:`reference` is precomputed for shipped instances facing their own schedule; for any
    other schedule (disruptions injected) or instance it is solved after the episode by
    ``finish_metrics()`` (inside the last ``step()`` with ``reference_solve="inline"``) and
    cached. It is looked up again after every reset and every disruption.

    ## Arguments

    Those of Realm-P3-v0 (``instance`` takes shipped ``p4_*`` names, default
    ``"p4_small_01"``, P4 or P3 files and instances; a P3 instance runs without disruptions;
    ``generator`` draws P4 instances, disruptions included), plus:

    | argument | meaning |
    |---|---|
    | ``adaptation_reference`` | ``"deferred"`` (default): the re-solve from the episode's own state, as above, run by ``finish_metrics()`` after the episode (the evaluation runner calls it; the last ``info["metrics"]`` says ``adaptation_pending``), never inside ``step()``; ``"resolve"``: the same, inside the last ``step()``; ``"oracle"``: the stored adaptive oracle's value (``reference.extra["adaptive_oracle_value"]``; no solver call at the end of an episode) |

    ## Version History

    * v0: Initial version. Later, still v0: ``generator=``, same-shape instance swaps at
      reset, ``reference=``; ``reference`` became a ``Reference`` record (it was a
      ``reference()`` method returning a dict). Dynamics and scores are unchanged.
      Issue 22 (scores you can trust), still v0: the optimality yardstick is the best plan
      known facing the disruptions (it was the adaptive oracle, which cheaper plans beat);
      the adaptation yardstick is deterministic and never worse than keeping the plan;
      coordination is measured from the best one-vehicle plan (one vehicle alone scores 0);
      an unserved request costs 5000; adaptation is None when no disruption struck; the
      shipped instances were regenerated with disruptions aimed at the rides.
      Issue 36, still v0: adaptation is the avoidable share (it was ``min(1, yardstick /
      cost)``), the yardstick a portfolio's best from the strike with parked vehicles back.
    """

    instance_source = SOURCE
    #: The disruption types this env knows (the disruption protocol).
    disruption_kinds = DISRUPTION_KINDS
    disruption_parser = staticmethod(parse_disruption)
    disruption_json = staticmethod(disruption_to_json)
    faced_reference = staticmethod(p4_reference)

    @checked_init
    @realm_keywords
    def __init__(
        self,
        instance: str | Path | dict | P3Instance | None = None,
        *,
        generator: dict | Callable[..., Any] | None = None,
        adaptation_reference: Literal["deferred", "resolve", "oracle"] = "deferred",
        **options: Any,
    ) -> None:
        self._init_disruptions(adaptation_reference)
        super().__init__(instance, generator=generator, **options)

    # ================================================================== disruptions
    def _disruption_window(self) -> tuple[int, int]:
        """Vehicles' start .. the last dropoff."""
        return (self.instance.start_time, self.instance.horizon)

    def _struck_roads(self, d: Any) -> list[tuple[int, int]]:
        inst = self.instance
        return d.roads(inst.index, inst.locations)

    # ================================================================== results
    def _solo_value(self) -> float | None:
        """The best one-vehicle plan's cost facing this episode's disruptions."""
        schedule = self.faced_schedule()
        return self.yardstick.memo("solo", lambda: solo_reference(self.instance, schedule)["value"], *schedule)

    def _stored_adaptation_value(self) -> float:
        """The stored adaptive oracle's value (the reference's, when it has none)."""
        ref = self.reference
        return float(ref.extra.get("adaptive_oracle_value", ref.value))

    def _resolved_adaptation_value(self, snapshot: RideSim, schedule: list[Any], keep: dict[int, list[int]] | None) -> float:
        return float(adaptation_reference(snapshot, schedule, keep)["value"])

    def _yardstick_schedule(self) -> list[Any]:
        """The disruptions still to come at the first strike (and those injected since)."""
        return list(self._snapshot.pending) + list(self._injected_after_snapshot)

    def _trivial_adaptation_cost(self) -> float | None:
        """The score's 0: serving nobody new from the yardstick's start (a short simulation,
        no solver; None before any strike)."""
        if self._snapshot is None:
            return None
        return float(trivial_cost(yardstick_start(self._snapshot, self._yardstick_schedule())))

    def _adaptation_score(self, yardstick: float, cost: float, feasible: bool) -> float | None:
        """The share of the avoidable cost after the strike the plan avoided (see
        :func:`~crab_gym.envs.realm.ridesharing.adaptation.adaptation_score`)."""
        return adaptation_score(yardstick, self._trivial_adaptation_cost(), cost, feasible)

    def restore_adaptation_start(self) -> bool:
        """Put the episode in the yardstick's start: the state at the first strike with the
        parked vehicles back on the road (the scoring probes continue from it)."""
        if self._snapshot is None:
            return False
        self.sim = yardstick_start(self._snapshot, self._yardstick_schedule())
        self._unpause()
        self._cache.pop("mask", None)  # the mask belongs to the state replaced
        return True

    def _metrics(self) -> dict[str, Any]:
        metrics = super()._metrics()
        metrics["adaptation_trivial_cost"] = self._trivial_adaptation_cost()
        return metrics
