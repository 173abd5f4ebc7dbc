"""DiscreteActions: one ``Discrete`` action space over an env's finite choices, with masks.

Stable-Baselines3 and ``sb3_contrib.MaskablePPO`` need a flat ``Discrete`` space and an
``action_masks()`` method. A CrabEnv's :class:`~crab_gym.core.spaces.ActionCodec` already
enumerates the finite choices (every action whose parameters are all enums, bools or bounded
ints, in action order, then row-major over the parameters): this wrapper exposes exactly
that flat index, so action ``i`` of the wrapper is ``codec.flat_to_call(i)`` and the mask is
the env's own ``action_masks()``.

Actions with a non-finite parameter (a list, a string, a float: e.g. ``submit_plan``) have
no flat index and are **left out**: a policy acting through this wrapper builds its plan
step by step. If the env ever reaches a state where no finite action is legal but the
episode is not over (only such a non-finite action could move on), the wrapper truncates
the episode rather than hand MaskablePPO an all-False mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

#: A name no action has: the env rejects the call the way it rejects any unknown tool.
_NO_ACTION = "<invalid flat action>"


class DiscreteActions(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Flatten the finite actions of a CrabEnv into one ``Discrete(codec.n_flat)``.

    Args:
        env: a CrabEnv (possibly wrapped) whose codec has at least one finite choice.
        truncate_when_stuck: truncate an episode when no finite action is legal while the
            env has not terminated (default True; with False such a state yields an
            all-True mask, so every move is then an invalid no-op).

    The reward and ``info`` are the env's own; ``info["action"]`` is the tool call the flat
    index stood for. A tool call dict is also accepted and passed through. The observation is the
    env's own too, except that a ``MultiDiscrete`` part with a multi-dimensional ``nvec`` (P3/P4's
    ``request_places``) is flattened (``flat_observations=True``, the default), because
    Stable-Baselines3 one-hot encodes a ``MultiDiscrete`` entry by entry and fails deep in torch
    on one of more dimensions: ``MaskablePPO("MultiInputPolicy", DiscreteActions(env))`` works on
    every REALM id.
    """

    def __init__(self, env: gym.Env, *, truncate_when_stuck: bool = True, flat_observations: bool = True) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, truncate_when_stuck=truncate_when_stuck,
                                                 flat_observations=flat_observations)
        gym.Wrapper.__init__(self, env)
        codec = getattr(env.unwrapped, "codec", None)
        if codec is None or not hasattr(codec, "flat_to_call"):
            raise TypeError(
                f"DiscreteActions needs a CrabEnv (an env with an ActionCodec), got {type(env.unwrapped).__name__}"
            )
        if codec.n_flat < 1:
            raise ValueError(
                f"{type(env.unwrapped).__name__} has no action whose parameters are all finite, "
                "so there is nothing to flatten into a Discrete space"
            )
        self.codec = codec
        self.truncate_when_stuck = truncate_when_stuck
        self.action_space = spaces.Discrete(codec.n_flat)
        self._flatten = flat_observations and needs_flat_multidiscrete(env.observation_space)
        if self._flatten:
            self.observation_space = flat_multidiscrete_space(env.observation_space)
        #: names of the actions left out (non-finite parameters)
        self.excluded_actions: list[str] = [
            a.name for a, finite in zip(codec.actions, codec.finite) if not finite
        ]
        self._calls = [codec.flat_to_call(i) for i in range(codec.n_flat)]

    # ------------------------------------------------------------------ conversions
    def flat_to_call(self, index: int) -> dict[str, Any]:
        """Flat index -> tool call (a fresh dict each time)."""
        call = self._calls[int(index)]
        return {"name": call["name"], "arguments": dict(call["arguments"])}

    def call_to_flat(self, call: dict[str, Any]) -> int:
        """Tool call of a finite action -> flat index."""
        return self.codec.call_to_flat(call)

    def action_names(self) -> list[str]:
        """A short readable label per flat index, e.g. ``dispatch(job=3)``."""
        return [
            f"{c['name']}(" + ", ".join(f"{k}={v!r}" for k, v in c["arguments"].items()) + ")"
            for c in self._calls
        ]

    # ------------------------------------------------------------------ gym API
    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if isinstance(action, Mapping) and "name" in action:
            call = action  # a tool call passes through unchanged (handy for scripted moves)
        else:
            index = _as_index(action)
            if index is None or not 0 <= index < self.codec.n_flat:
                return self._reject(action)
            call = self.flat_to_call(index)
        obs, reward, terminated, truncated, info = self.env.step(call)
        obs = self._observe(obs)
        if self.truncate_when_stuck and not (terminated or truncated) and not self._env_masks().any():
            truncated = True
        return obs, reward, terminated, truncated, info

    def _reject(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Out of range or malformed: the env sees a call it rejects (state unchanged, the
        invalid-action penalty applies) and ``info["error"]`` names the bad flat action."""
        obs, reward, terminated, truncated, info = self.env.step({"name": _NO_ACTION, "arguments": {}})
        obs = self._observe(obs)
        if isinstance(info, dict):
            info["error"] = f"flat action {action!r} is not an index of Discrete({self.codec.n_flat})"
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._observe(obs), info

    def _observe(self, obs: Any) -> Any:
        return flat_multidiscrete_observation(obs, self.env.observation_space) if self._flatten else obs

    def action_masks(self) -> np.ndarray:
        """Legal flat actions (bool, length ``n``); never all False (see the module doc)."""
        mask = self._env_masks()
        if not mask.any():
            return np.ones(self.codec.n_flat, dtype=bool)
        return mask

    def _env_masks(self) -> np.ndarray:
        mask = np.asarray(self.env.get_wrapper_attr("action_masks")(), dtype=bool).reshape(-1)
        if mask.shape[0] != self.codec.n_flat:
            raise ValueError(f"the env's mask has length {mask.shape[0]}, expected {self.codec.n_flat}")
        return mask


def _as_index(action: Any) -> int | None:
    """An int-like action (python int, numpy integer, 0-d or 1-element array) -> int."""
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(-1)[0])
    return None


def needs_flat_multidiscrete(space: gym.Space) -> bool:
    """Whether ``space`` has a ``MultiDiscrete`` (alone or as a ``Dict`` part) with a
    multi-dimensional ``nvec``."""
    if isinstance(space, spaces.Dict):
        return any(needs_flat_multidiscrete(s) for s in space.spaces.values())
    return isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim > 1


def flat_multidiscrete_space(space: gym.Space) -> gym.Space:
    """``space`` with every multi-dimensional ``MultiDiscrete`` made one-dimensional (row-major)."""
    if isinstance(space, spaces.Dict):
        return spaces.Dict({k: flat_multidiscrete_space(s) for k, s in space.spaces.items()})
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim > 1:
        return spaces.MultiDiscrete(space.nvec.reshape(-1), dtype=space.dtype, start=space.start.reshape(-1))
    return space


def flat_multidiscrete_observation(observation: Any, space: gym.Space) -> Any:
    """An observation of ``space`` in the shape :func:`flat_multidiscrete_space` gives."""
    if isinstance(space, spaces.Dict):
        return {k: flat_multidiscrete_observation(observation[k], s) for k, s in space.spaces.items()}
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim > 1:
        return np.asarray(observation).reshape(-1)
    return observation
