"""Realm-P8-v0: wedding logistics with road disruptions (closures and traffic delays that
strike at given minutes during the episode).

The env is :class:`WeddingDisruptionEnv`; its docstring is the reference. It implements the
disruption protocol of :mod:`crab_gym.envs.realm.common.disruptions`, which is all
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
from crab_gym.envs.realm.wedding.disruptions import DISRUPTION_KINDS, disruption_to_json, parse_disruption
from crab_gym.envs.realm.wedding.env import WeddingEnv, instance_kind
from crab_gym.envs.realm.wedding.formats import load_p8, shipped_p8_names
from crab_gym.envs.realm.wedding.generator import generate_p8
from crab_gym.envs.realm.wedding.model import P8Instance, WeddingInstance
from crab_gym.envs.realm.wedding.references import adaptation_value, p8_reference
from crab_gym.envs.realm.wedding.sim import WeddingSim

DEFAULT_INSTANCE = "p8_small_00"
#: Where the env's instances come from (``instance=``, ``generator=``).
SOURCE = InstanceSource(instance_kind("P8", (P8Instance, WeddingInstance), shipped_p8_names), load_p8,
                        SizedGenerator(generate_p8, {"n_guests": 3, "n_errands": 3, "n_vehicles": 2}, "p8"),
                        DEFAULT_INSTANCE)


class WeddingDisruptionEnv(FleetDisruptionMixin, WeddingEnv):
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
    ``finish_metrics()`` after the episode -- the evaluation runner calls it; the last
    ``info["metrics"]`` says ``adaptation_pending`` -- never inside ``step()``), ``"resolve"``
    (the same, inside the last ``step()``) or ``"oracle"`` (the P8 reference's value; no solver
    call at the end of an episode).

    ## Version History

    * v0: Initial version.
    """

    instance_source = SOURCE
    disruption_kinds = DISRUPTION_KINDS
    disruption_parser = staticmethod(parse_disruption)
    disruption_json = staticmethod(disruption_to_json)
    faced_reference = staticmethod(p8_reference)

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | WeddingInstance | None = None, *, generator: dict | Callable[..., Any] | None = None,
        adaptation_reference: Literal["deferred", "resolve", "oracle"] = "deferred", **options: Any,
    ) -> None:
        self._init_disruptions(adaptation_reference)
        super().__init__(instance, generator=generator, **options)

    def _disruption_window(self) -> tuple[int, int]:
        """The first vehicle free .. the deadline."""
        return (min(v.available for v in self.instance.vehicles), self.instance.deadline)

    def _struck_roads(self, d: Any) -> list[tuple[int, int]]:
        pair = d.pair(self.instance.places)
        return [] if pair is None else [pair, (pair[1], pair[0])]

    # ================================================================== results
    def _coordination_yardsticks(self) -> tuple[float | None, float | None]:
        """P5's: the plain problem's single-vehicle and best known costs."""
        extra = self.reference.extra
        return extra.get("solo_value"), extra.get("initial_value")

    def _stored_adaptation_value(self) -> float | None:
        """The P8 reference's value."""
        value = self.reference.value
        return None if value is None else float(value)

    def _resolved_adaptation_value(self, snapshot: WeddingSim, schedule: list[Any], keep: dict[int, list[int]] | None) -> float:
        return float(adaptation_value(snapshot, schedule, keep))
