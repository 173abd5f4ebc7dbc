"""What one benchmark episode is (:class:`EpisodeSpec`) and what it produced (:class:`EpisodeResult`).

A spec is small and JSON-able on purpose: it is what crosses a process or network boundary
(workers rebuild the env and the policy from its names), and its :attr:`~EpisodeSpec.key`
identifies the episode in ``episodes.jsonl`` so that a rerun skips what is already there.
Its seed is a function of the spec alone, never of the order in which episodes finish.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from crab_gym.evaluation.outcome import outcome

#: The labels that place an episode in a benchmark: its split, its instance and that one's size.
CASE_LABELS = ("split", "instance", "size")

#: Tolerance for "every sub-goal passed" / "every constraint holds" (shares are ratios).
_FULL = 1.0 - 1e-9


def canonical_json(value: Any) -> str:
    """One spelling per value (sorted keys): what keys and report groups compare."""
    return json.dumps(value, sort_keys=True, default=str)


def _natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts ``Realm-P2-v0`` before ``Realm-P10-v0``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def env_order(env_id: str) -> tuple[Any, ...]:
    """Report order of env ids: the problem index's (REALM's P1 ... P11, then the job-shop
    variants J2 ... J4, which extend P11), then any other id; naturally within each."""
    rank = 0 if env_id.startswith("Realm-P") else 1 if env_id.startswith("Realm-J") else 2
    return (rank, *_natural(env_id))


@dataclass(frozen=True)
class EnvCase:
    """One env a benchmark plays: an id, the keywords of ``gym.make`` (the instance among them)
    and the labels its episodes carry (the split, the instance's name, its size class).
    :func:`crab_gym.datasets.splits.select` makes them from a split."""

    env_id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    split: str | None = None
    instance: str | None = None
    size: str | None = None


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to run: everything a worker needs, and nothing bigger.

    Attributes:
        env_id: a registered id (or ``module:id``); the worker calls ``gym.make`` itself.
        env_kwargs: keyword arguments of ``gym.make``.
        policy: the policy's name (a key of the policies the benchmark runs).
        index: the episode's index for this (env, kwargs, policy).
        seed: the reset seed (and the policy's per-episode seed).
        max_steps: the step cap of the episode.
        policy_kwargs: keyword arguments of the policy factory (none for the named baselines).
        split: the instance split the episode belongs to (``"test"``, ``"dev"``, a folder), or
            None for a run that named no split.
        instance: the instance's name (a shipped name or a file's stem), or None (the env's
            default instance, or one drawn by ``generator=``).
        size: the instance's size class (``"small"``, ``"15x15"``), for the per-size breakdown.
    """

    env_id: str
    env_kwargs: Mapping[str, Any]
    policy: str
    index: int
    seed: int
    max_steps: int
    policy_kwargs: Mapping[str, Any] = field(default_factory=dict)
    split: str | None = None
    instance: str | None = None
    size: str | None = None

    @property
    def key(self) -> str:
        """The episode's identity in ``episodes.jsonl`` (canonical JSON of the spec)."""
        return canonical_json(self.to_dict())

    @property
    def sort_key(self) -> tuple[Any, ...]:
        """Report order: by env, split, policy, instance and index; never by completion order."""
        return (env_order(self.env_id), self.split or "", self.policy, _natural(self.instance or ""),
                canonical_json(self.env_kwargs), canonical_json(self.policy_kwargs), self.index, self.seed,
                self.max_steps)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form sent to workers. The case labels (split, instance, size) are left
        out while None, so that episodes stored before they existed keep their keys."""
        out = {"env_id": self.env_id, "env_kwargs": dict(self.env_kwargs), "policy": self.policy,
               "index": self.index, "seed": self.seed, "max_steps": self.max_steps,
               "policy_kwargs": dict(self.policy_kwargs)}
        out.update({label: getattr(self, label) for label in CASE_LABELS if getattr(self, label) is not None})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeSpec:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass
class EpisodeResult:
    """One episode's outcome. ``error`` (``"Type: message"``) is set when the episode raised;
    the other fields then hold what was measured before the exception, and ``error_kind`` says
    who is to blame: ``"agent"`` (the policy's own code raised) or ``"infra"`` (the env, the
    worker, the model API...; None in records written before the field: infra too). See
    :attr:`outcome` and :mod:`crab_gym.evaluation.outcome`.

    ``wall_time_s`` and ``usage["latency_s"]`` are wall-clock measurements by the runner;
    ``usage`` also holds a policy's resource use (LLM tokens and requests), REALM's
    resource-usage metric, which never goes through the env's ``info``.

    ``episode_return`` is the sum of the step rewards plus ``deferred_return``: the part the
    env settled after the episode (``env.unwrapped.deferred_reward()``: the optimality term of
    an instance whose reference was solved after the last step; 0 when nothing waited).
    """

    env_id: str
    env_kwargs: dict[str, Any]
    policy: str
    seed: int
    episode_return: float = 0.0
    steps: int = 0
    invalid_actions: int = 0
    completeness: float = 0.0
    terminated: bool = False
    truncated: bool = False
    metrics: dict[str, Any] = field(default_factory=dict)
    wall_time_s: float = 0.0
    success: bool = False
    error: str | None = None
    traceback: str | None = None
    index: int = 0
    max_steps: int | None = None
    policy_kwargs: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    split: str | None = None
    instance: str | None = None
    size: str | None = None
    error_kind: str | None = None
    deferred_return: float = 0.0

    @classmethod
    def for_spec(cls, spec: EpisodeSpec) -> EpisodeResult:
        """An empty tally for ``spec`` (filled in as the episode runs)."""
        return cls(env_id=spec.env_id, env_kwargs=dict(spec.env_kwargs), policy=spec.policy, seed=spec.seed,
                   index=spec.index, max_steps=spec.max_steps, policy_kwargs=dict(spec.policy_kwargs),
                   split=spec.split, instance=spec.instance, size=spec.size)

    @property
    def spec(self) -> EpisodeSpec:
        """The spec this result answers (what resume matches on)."""
        return EpisodeSpec(self.env_id, self.env_kwargs, self.policy, self.index, self.seed,
                           self.max_steps if self.max_steps is not None else 0, self.policy_kwargs,
                           self.split, self.instance, self.size)

    @property
    def outcome(self) -> str:
        """``finished`` (a complete, feasible plan), ``agent_failed`` or ``infra_failed``:
        the three outcomes the report keeps apart (:func:`crab_gym.evaluation.outcome.outcome`)."""
        return outcome(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeResult:
        """Rebuild from :meth:`to_dict` (unknown keys from newer versions are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def episode_success(terminated: bool, completeness: float, metrics: Mapping[str, Any]) -> bool:
    """A complete, feasible plan: the episode terminated (was not truncated) with every
    sub-goal passed, and every constraint holds when the env reports
    ``constraint_satisfaction``. Optimality is not required: that is its own metric."""
    cs = metrics.get("constraint_satisfaction")
    feasible = not isinstance(cs, (int, float)) or isinstance(cs, bool) or cs >= _FULL
    return bool(terminated and completeness >= _FULL and feasible)
