"""Whether a family's heuristic fits the env it is given.

A heuristic reads its family's env state (``env.unwrapped.sim``, ``.kitchen``, ``.tour``) or
observation keys; given another problem's env it used to fail deep in its first step with a
``KeyError`` or ``AttributeError`` naming a part of the wrong env. :class:`EnvFit` turns that
into one :class:`PolicyFitError` (a ``TypeError``) naming what the heuristic acts on and what
it got, e.g. ``GreedyReliefPolicy acts on Realm-P7-v0 (DisasterReliefEnv); got RideSharingEnv
(Realm-P3-v0)``.

Envs are matched by the qualified names of the classes in their MRO (a subclass fits), so a
heuristic names its env without importing the env module (which imports the heuristic's
oracle and references in turn). A class that fitted once is remembered: the check per call
is one set lookup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium as gym


class PolicyFitError(TypeError):
    """A heuristic was given an env (or an observation) of another problem."""


def _registered_id(cls: type) -> str | None:
    """The id ``cls`` is registered under (its entry point), if any."""
    target = f"{cls.__module__}:{cls.__qualname__}"
    ids = sorted(spec.id for spec in gym.registry.values() if spec.entry_point == target)
    return ids[0] if ids else None


def env_label(env: Any) -> str:
    """``RideSharingEnv (Realm-P3-v0)``: the env's class, and its id when it has one."""
    base = getattr(env, "unwrapped", env)
    cls = type(base)
    spec = getattr(base, "spec", None) or getattr(env, "spec", None)
    env_id = getattr(spec, "id", None) or _registered_id(cls)
    return f"{cls.__qualname__} ({env_id})" if env_id else cls.__qualname__


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class EnvFit:
    """The envs a heuristic acts on: ``check(env)`` returns ``env.unwrapped`` or raises
    :class:`PolicyFitError`.

    Args:
        policy: the heuristic's name in messages (``"GreedyReliefPolicy"``).
        env_class: the qualified name of the env class it acts on (subclasses fit too).
        env_ids: the ids of that class and its subclasses, for the message.
    """

    def __init__(self, policy: str, env_class: str, env_ids: Iterable[str]) -> None:
        self.policy, self.env_class = policy, env_class
        self.acts_on = f"{' or '.join(env_ids)} ({env_class.rsplit('.', 1)[-1]})"
        self._fitting: set[type] = set()

    def check(self, env: Any) -> Any:
        """``env.unwrapped`` if it is (a subclass of) the env class, else a PolicyFitError."""
        base = getattr(env, "unwrapped", env)
        cls = type(base)
        if cls not in self._fitting:
            if not any(_qualified(c) == self.env_class for c in cls.__mro__):
                raise PolicyFitError(f"{self.policy} acts on {self.acts_on}; got {env_label(env)}")
            self._fitting.add(cls)
        return base


def observation_fit_error(policy: str, acts_on: str, keys: Iterable[str], observation: Any) -> PolicyFitError:
    """The error for an observation that lacks the ``keys`` a heuristic reads."""
    wanted = ", ".join(sorted(keys))
    if isinstance(observation, Mapping):
        got = f"an observation with keys {', '.join(sorted(map(str, observation)))}"
    else:
        got = f"a {type(observation).__name__} observation"
    return PolicyFitError(f"{policy} acts on {acts_on} observations (keys {wanted}); got {got}")


class FittedPolicy:
    """A heuristic policy bound to the env it acts in: ``fit`` is checked when the policy is
    built and at every ``reset(env)`` that hands it another env. A subclass sets ``fit``, ``name``
    and ``__call__``; :meth:`_restart` clears what it planned for the last episode."""

    fit: EnvFit
    name = ""

    def __init__(self, env: Any) -> None:
        self.fit.check(env)
        self.env = env
        self._restart()

    def reset(self, env: Any | None = None) -> None:
        if env is not None:
            self.fit.check(env)
            self.env = env
        self._restart()

    def _restart(self) -> None:
        """Forget the last episode's plan (nothing by default)."""
