"""DisruptionWrapper: inject disruptions into any env that supports them.

An env supports disruptions when it implements the disruption protocol,
:class:`~crab_gym.envs.realm.common.disruptions.DisruptiveEnv` (Realm-P4 now; P7-P10 will
follow): ``disruption_kinds``, ``parse_disruption(d)``, ``apply_disruption(d)``,
``disruption_targets()`` and ``faced_schedule()``. The wrapper imports no problem family: it
speaks only that protocol. The env owns the semantics: a disruption whose start has come is
applied at once, a later one when the env's clock reaches it, and from then on the env's
masks, costs and observation reflect it, ``info`` reports it, and the adaptation metric in
``info["metrics"]`` scores the replan against the oracle's. The wrapper decides *which*
disruptions an episode faces:

* ``disruptions="schedule"`` (default): the instance's own schedule, which the env applies by
  itself -- the wrapper adds nothing (and reports as below);
* ``disruptions=[...]``: a list given by the user (typed models or mappings), *added* to the
  instance's schedule. To face only your own, make the env on the instance without its
  schedule (for P4: ``instance=load_p4(name).model_copy(update={"disruptions": []})``);
* ``random=RandomDisruptions(rate=..., types=..., delay=..., duration=...)``: a seeded random
  process over the env's ``disruption_targets()`` and ``disruption_kinds``, drawn afresh for
  each episode.

All of an episode's disruptions are handed to the env at ``reset``, each with its start
minute, so they take effect exactly when the clock reaches them -- also in the middle of a
submitted plan, which the env then pauses. The env's announcement of a disruption scheduled
for later is removed from ``info["events"]`` (``hide_scheduled``), so the agent learns of it
when it happens, as with the instance's own schedule.

Typed disruptions: each is validated against the instance when given (or drawn), through
the env's ``parse_disruption``; an invalid one (an unknown route or place, a negative
duration, an unknown type) raises :class:`InvalidDisruptionError` naming its index.

Determinism: ``reset(seed=s)`` draws the random disruptions from ``(seed, s)``; an unseeded
reset continues the wrapper's own generator. The env's generator is never touched.

``info["injected_disruptions"]`` (every step, a fixed key) lists the wrapper's disruptions
that took effect during that step or reset, as JSON; ``wrapper.episode_disruptions`` holds
all of the current episode's injected disruptions (not in ``info``: it would tell the agent
the future).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.disruptions import DisruptionKind, InvalidDisruptionError, missing_members
from crab_gym.wrappers._jsonable import to_jsonable

__all__ = ["INFO_KEY", "DisruptionWrapper", "InvalidDisruptionError", "RandomDisruptions", "disruption_targets"]

INFO_KEY = "injected_disruptions"


class RandomDisruptions(BaseModel):
    """A seeded random process of disruptions (a Poisson process in clock time).

    Args:
        rate: expected disruptions per 60 units of the env's clock (per hour where it counts
            minutes, as most do; P10's counts days).
        types: the types to draw from, uniformly (default: every type the env knows, its
            ``disruption_kinds``).
        delay: ``[low, high]`` extra minutes (for the types that have a delay).
        duration: ``[low, high]`` minutes a disruption lasts.
        window: ``[first, last]`` start minutes (minutes from midnight); default: from the
            instance's start to its horizon (P4: the last latest dropoff).
        max_count: at most this many per episode.
        step: start minutes are multiples of this (1 = any minute).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate: float = Field(ge=0.0, description="expected disruptions per 60 clock units (an hour in minutes)")
    types: tuple[str, ...] | None = Field(default=None, min_length=1)
    delay: tuple[int, int] = (5, 30)
    duration: tuple[int, int] = (15, 90)
    window: tuple[int, int] | None = None
    max_count: int = Field(default=20, ge=0)
    step: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _ranges(self) -> RandomDisruptions:
        for name in ("delay", "duration", "window"):
            value = getattr(self, name)
            if value is None:
                continue
            lo, hi = value
            if lo < 0 or hi < lo:
                raise ValueError(f"{name} must be [low, high] with 0 <= low <= high, got {list(value)}")
        if not math.isfinite(self.rate):
            raise ValueError("rate must be finite")
        return self

    def types_among(self, kinds: Mapping[str, Any]) -> tuple[str, ...]:
        """The types to draw from (default: every one of ``kinds``, the env's
        ``disruption_kinds``); raises :class:`InvalidDisruptionError` naming any type not in
        ``kinds``."""
        types = tuple(kinds) if self.types is None else self.types
        unknown = [t for t in types if t not in kinds]
        if unknown or not types:
            raise InvalidDisruptionError(
                f"unknown disruption type(s) {unknown}; known: {', '.join(kinds) or 'none (no kinds in targets)'}"
            )
        return types

    def draw(self, rng: np.random.Generator, targets: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One episode's disruptions as mappings, sorted by start.

        ``targets``: ``{"routes": ["a-b", ...], "locations": [...], "window": (lo, hi),
        "kinds": {type: DisruptionKind}}`` and optionally ``"locations_by_kind": {type:
        [...]}`` (a type's own places, where it cannot strike every location), as
        :func:`disruption_targets` gives them.
        """
        lo, hi = self.window if self.window is not None else targets["window"]
        routes, locations = list(targets.get("routes", [])), list(targets.get("locations", []))
        kinds: Mapping[str, DisruptionKind] = targets.get("kinds", {})
        by_kind: Mapping[str, Any] = targets.get("locations_by_kind", {})
        types = self.types_among(kinds)
        out: list[dict[str, Any]] = []
        if self.rate <= 0:
            return out
        t = float(lo)
        while len(out) < self.max_count:
            t += float(rng.exponential(60.0 / self.rate))
            if t > hi:
                break
            kind = types[int(rng.integers(len(types)))]
            at_place = kinds[kind].strikes == "location"
            start = min(int(hi), self.step * int(math.floor(t / self.step)))
            item: dict[str, Any] = {
                "type": kind,
                "start": max(int(lo), start),
                "duration": int(rng.integers(self.duration[0], self.duration[1] + 1)),
            }
            pool = by_kind.get(kind, locations) if at_place else routes
            if not pool:
                raise InvalidDisruptionError(f"no {'place' if at_place else 'road'} to put a {kind} on")
            item["location" if at_place else "route"] = pool[int(rng.integers(len(pool)))]
            if kinds[kind].has_delay:
                item["delay"] = int(rng.integers(self.delay[0], self.delay[1] + 1))
            out.append(item)
        return out


class DisruptionWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Choose the disruptions an episode faces and inject them through ``apply_disruption``.

    Args:
        env: an env that implements the disruption protocol (put this wrapper directly on it:
            the observation is re-read from the env after an injection that applies at once).
        disruptions: ``"schedule"`` (the instance's own only) or a list of disruptions added
            to it (typed models or mappings; ``start`` None means at the reset).
        random: a :class:`RandomDisruptions` (or its mapping) drawn for each episode.
        seed: seeds the random process (with the reset seed).
        hide_scheduled: drop the env's announcement of a wrapper disruption scheduled for
            later from ``info["events"]`` (it is reported when it takes effect).
    """

    def __init__(
        self,
        env: gym.Env,
        disruptions: Literal["schedule"] | Sequence[Any] = "schedule",
        *,
        random: RandomDisruptions | Mapping[str, Any] | None = None,
        seed: int | None = None,
        hide_scheduled: bool = True,
    ) -> None:
        base = env.unwrapped
        missing = missing_members(base)
        if missing:
            raise TypeError(
                f"{type(base).__name__} does not support disruptions: it lacks {', '.join(missing)} "
                "(see crab_gym.envs.realm.common.disruptions.DisruptiveEnv)"
            )
        layer = env
        while isinstance(layer, gym.Wrapper):
            if isinstance(layer, gym.ObservationWrapper):
                raise ValueError(
                    f"put DisruptionWrapper below {layer.class_name()}: it re-reads the env's own "
                    "observation after an injection, which an observation wrapper underneath would change"
                )
            layer = layer.env
        if isinstance(disruptions, str):
            if disruptions != "schedule":
                raise ValueError(f"disruptions must be 'schedule' or a list, got {disruptions!r}")
            given: list[Any] = []
        else:
            given = [self._parse(base, d, f"disruptions[{k}]") for k, d in enumerate(disruptions)]
        process = RandomDisruptions.model_validate(dict(random)) if isinstance(random, Mapping) else random
        if process is not None and not isinstance(process, RandomDisruptions):
            raise TypeError(f"random must be a RandomDisruptions or a mapping, got {type(random).__name__}")
        if process is not None and process.types is not None:
            try:
                process.types_among(base.disruption_kinds)
            except InvalidDisruptionError as exc:
                raise InvalidDisruptionError(f"random: {exc}") from None
        gym.utils.RecordConstructorArgs.__init__(
            self,
            disruptions="schedule" if isinstance(disruptions, str) else [to_jsonable(d) for d in given],
            random=None if process is None else process.model_dump(mode="json"),
            seed=seed,
            hide_scheduled=hide_scheduled,
        )
        gym.Wrapper.__init__(self, env)
        self.disruptions = given
        self.random = process
        self.random_seed = seed
        self.hide_scheduled = hide_scheduled
        self._rng = np.random.default_rng(seed)
        #: the wrapper's disruptions of the current episode (typed), in injection order
        self.episode_disruptions: list[Any] = []
        self._waiting: list[tuple[str, int | None, Any]] = []  # (type, where, end) not yet applied
        self._announcements: set[str] = set()

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        base = self.env.unwrapped
        if seed is not None:
            self._rng = np.random.default_rng([0 if self.random_seed is None else int(self.random_seed), int(seed)])
        drawn: list[Any] = []
        if self.random is not None:
            drawn = [
                self._parse(base, d, f"random disruption {k}")
                for k, d in enumerate(self.random.draw(self._rng, disruption_targets(base)))
            ]
        self.episode_disruptions = list(self.disruptions) + drawn
        self._waiting = []
        self._announcements = set()
        applied_now: list[Any] = []
        for d in self.episode_disruptions:
            result = base.apply_disruption(d)
            typed = self._typed(result, d)
            if isinstance(result, Mapping) and result.get("applied"):
                applied_now.append(to_jsonable(result.get("disruption", typed)))
            else:
                self._waiting.append(_key(typed))
                if isinstance(result, Mapping) and result.get("message"):
                    self._announcements.add(str(result["message"]))
        if self.episode_disruptions:
            # the env observed before the injections: observe again, and merge the info
            # entries the injections produced (events, disruptions applied)
            obs = base._get_obs()
            info = _merge(dict(info), base._extra_info())
        info = self._report(info, applied_now)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        fired = info.get("disruptions", []) if isinstance(info, dict) else []
        ours = []
        for item in fired if isinstance(fired, list) else []:
            key = _key(item)
            match = key if key in self._waiting else next((k for k in self._waiting if _same(k, key)), None)
            if match is not None:
                self._waiting.remove(match)
                ours.append(item)
        return obs, reward, terminated, truncated, self._report(info, ours)

    # ------------------------------------------------------------------ internals
    def _report(self, info: dict[str, Any], ours: list[Any]) -> dict[str, Any]:
        info = dict(info)
        info[INFO_KEY] = [to_jsonable(d) for d in ours]
        if self.hide_scheduled and self._announcements and isinstance(info.get("events"), list):
            info["events"] = [e for e in info["events"] if e not in self._announcements]
        return info

    @staticmethod
    def _parse(base: Any, disruption: Any, where: str) -> Any:
        try:
            return base.parse_disruption(disruption)
        except InvalidDisruptionError as exc:
            raise InvalidDisruptionError(f"{where}: {exc}") from None

    @staticmethod
    def _typed(result: Any, given: Any) -> Any:
        """The disruption as the env registered it (its start filled in), as JSON."""
        if isinstance(result, Mapping) and result.get("disruption") is not None:
            return result["disruption"]
        return to_jsonable(given)


def _key(d: Any) -> tuple[str, Any, Any]:
    """What identifies a disruption across a later start: type, place and end minute (an env
    applying a disruption late keeps its end, or starts it at its end if that has passed)."""
    data = to_jsonable(d)
    where = data.get("route") or data.get("location")
    start, duration = data.get("start"), data.get("duration")
    end = None if start is None or duration is None else int(start) + int(duration)
    return (str(data.get("type")), where, end)


def _same(waiting: tuple[str, Any, Any], applied: tuple[str, Any, Any]) -> bool:
    """Whether an applied disruption is a waiting one: same type and place, and the same end
    -- or, applied after its end (the clock jumped past it), zero-length at a later start."""
    if waiting[:2] != applied[:2]:
        return False
    if waiting[2] is None or applied[2] is None:
        return True
    return applied[2] == waiting[2] or applied[2] > waiting[2]


def _merge(info: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, list) and isinstance(info.get(key), list):
            info[key] = list(info[key]) + list(value)
        else:
            info[key] = value
    return info


def disruption_targets(base: Any) -> dict[str, Any]:
    """Where random disruptions may strike in ``base`` (an env of the disruption protocol):
    its ``disruption_targets()`` (``routes``, ``locations``, the start ``window``) and its
    ``kinds`` (``disruption_kinds``: where each type strikes, whether it has a delay)."""
    return {**base.disruption_targets(), "kinds": dict(base.disruption_kinds)}
