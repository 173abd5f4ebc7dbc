"""Environment: a named set of actions and observations over some state, with a backend.

The same actions can run in-process (the state lives in this Python process) or on another
machine through ``crab-gym serve`` (a remote backend posts tool calls over HTTP). Agents and
envs only ever see :meth:`Environment.take` and :meth:`Environment.observe`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from crab_gym.core.action import Action, ActionArgumentError


class Backend(Protocol):
    """Where actions actually run."""

    def run(self, action: Action, arguments: Mapping[str, Any]) -> Any:
        """Validate and run one action; return its result."""
        ...


class LocalBackend:
    """Runs actions in this process, injecting ``context`` as the kept ``env`` parameter."""

    def __init__(self, context: Any = None) -> None:
        self.context = context

    def run(self, action: Action, arguments: Mapping[str, Any]) -> Any:
        return action(**dict(arguments), env=self.context)


class Environment:
    """A named set of actions and observation actions, bound to a backend.

    Args:
        name: the environment's name (actions' ``env_name``).
        actions: what an agent may do.
        observations: closed actions whose results form an observation.
        backend: where actions run (default: in-process, ``env`` = ``context``).
        context: the object injected as ``env`` by the default local backend.
        description: shown to agents.
    """

    def __init__(
        self,
        name: str,
        actions: Sequence[Action],
        observations: Sequence[Action] = (),
        *,
        backend: Backend | None = None,
        context: Any = None,
        description: str = "",
    ) -> None:
        self.name = name
        self.actions = {a.name: a for a in actions}
        if len(self.actions) != len(actions):
            raise ValueError(f"environment '{name}': action names must be unique")
        self.observations = {o.name: o for o in observations}
        for obs in observations:
            if not obs.is_closed:
                raise ValueError(f"observation '{obs.name}' must need no arguments, needs {obs.required_params}")
        self.backend: Backend = backend if backend is not None else LocalBackend(context)
        self.description = description
        self.history: list[dict[str, Any]] = []

    def take(self, name: str, arguments: Mapping[str, Any] | None = None, *, record: bool = True) -> Any:
        """Run action ``name`` with ``arguments``; unknown names raise a clear error.

        ``record=False`` keeps the call out of :attr:`history` (for observations and probes,
        which change nothing and would otherwise grow the history on every step).
        """
        if name not in self.actions:
            raise ActionArgumentError(name, None, f"unknown action in '{self.name}'; available: {list(self.actions)}")
        result = self.backend.run(self.actions[name], dict(arguments or {}))
        if record:
            self.history.append({"name": name, "arguments": dict(arguments or {})})
        return result

    def observe(self) -> dict[str, Any]:
        """Run every observation action; ``{name: value}``."""
        return {name: self.backend.run(obs, {}) for name, obs in self.observations.items()}

    def tools(self, fmt: Literal["openai", "anthropic"] = "openai") -> list[dict[str, Any]]:
        """The actions as tool definitions."""
        return [a.to_tool(fmt) for a in self.actions.values()]
