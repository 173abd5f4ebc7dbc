"""One episode played through MCP tool calls: the env, the state in words, and its record.

The words are the LLM adapter's (:class:`~crab_gym.wrappers.LLMAdapter`: the env's
``task_description`` and ``describe()``, the last call's result or the env's reason for
rejecting it, the legal calls), so an MCP agent reads what ``LLMAgent`` reads. The record is an
:class:`~crab_gym.evaluation.episode.EpisodeResult` kept as ``crab-gym run``'s runner keeps it (steps,
invalid calls, return, completeness, success), and the metrics at the end come from
:func:`~crab_gym.evaluation.episode_runner.settle_episode`, which does the solves an env deferred
out of ``step()`` and adds what they settle to the return -- so an MCP episode reports what
``crab-gym run`` reports for the same plan.

Nothing here waits on the network or knows the SDK: the server calls :meth:`McpEpisode.step`
on its event loop (a planning env's step is microseconds) until a step is slow
(:attr:`McpEpisode.slow`: a desktop's step types, clicks and waits for the screen), then in a
worker thread, as :meth:`McpEpisode.finish` always is (the deferred solves may take seconds).
"""

from __future__ import annotations

import time
import traceback as tb
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.evaluation.episode import EpisodeResult, EpisodeSpec, episode_success
from crab_gym.evaluation.episode_runner import settle_episode
from crab_gym.wrappers import LLMAdapter

#: What making an env raises for a bad id, keyword or instance: the caller's mistake.
USER_ERRORS = (TypeError, ValueError, KeyError, LookupError, OSError, ImportError, gym.error.Error)
#: At most this many legal calls are listed in an observation's structured part.
MAX_LEGAL_CALLS = 1000
#: A step that took longer than this (seconds) makes the episode's later steps run off the event loop.
SLOW_STEP_S = 0.005


class ToolError(Exception):
    """A call answered with an MCP tool error; the message is written for the model."""


@dataclass(frozen=True)
class EpisodeRequest:
    """What ``start_episode`` asked for.

    Attributes:
        env_id: a registered id, e.g. ``Realm-P11-v0``.
        env_kwargs: the keywords of ``gym.make`` (``instance`` among them when one was named).
        seed: the reset seed.
        max_steps: the episode is cut (truncated) after this many calls, as ``--max-steps``.
        agent: the name the episode is recorded under (the report's policy column).
        state_in_replies: an action's reply also gives the new state and legal calls.
        split, instance, size: the labels the record keeps (the split the client is playing,
            the instance's name and its size class), as ``crab-gym run --split`` records them.
    """

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    max_steps: int = 10_000
    agent: str = "mcp"
    state_in_replies: bool = True
    split: str | None = None
    instance: str | None = None
    size: str | None = None


@dataclass
class StepReply:
    """What one action call did, for the tool's reply."""

    text: str
    data: dict[str, Any]
    error: bool


def error_text(exc: BaseException) -> str:
    """The message of an env construction error, unwrapped from gym.make's re-raise."""
    cause = exc.__cause__
    if isinstance(exc, TypeError) and cause is not None and "was raised from the environment creator" in str(exc):
        exc = cause
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return " ".join(str(exc).split()) or type(exc).__name__


def make_env(env_id: str, env_kwargs: dict[str, Any]) -> gym.Env:
    """``gym.make`` with a tool error that gives the env's own reason."""
    if env_id not in gym.registry:
        raise ToolError(f"unknown env id {env_id!r}; list_envs gives the ids")
    try:
        env = gym.make(env_id, **env_kwargs)
    except USER_ERRORS as exc:
        raise ToolError(f"cannot make {env_id} with keywords {env_kwargs}: {error_text(exc)}") from None
    if getattr(env.unwrapped, "codec", None) is None:
        env.close()
        raise ToolError(f"{env_id} has no actions with schemas (it is not a CrabEnv): it cannot be played here")
    return env


class McpEpisode:
    """An env, its LLM adapter for the words, and the episode's running record.

    Args:
        request: what was asked for.
        index: the episode's number among those recorded for (env, keywords, agent).
        env: the env, made from the request by :func:`make_env`.
    """

    def __init__(self, request: EpisodeRequest, index: int, env: gym.Env) -> None:
        self.request = request
        self.env = env
        self.adapter = LLMAdapter(self.env, tools_in_prompt=False)
        spec = EpisodeSpec(request.env_id, request.env_kwargs, request.agent, index, request.seed, request.max_steps,
                           split=request.split, instance=request.instance, size=request.size)
        self.tally = EpisodeResult.for_spec(spec)
        self.done = False
        self.finished = False
        self._info: dict[str, Any] = {}
        self._last: tuple[Any, Any] | None = None  # (call, observation) of the last step
        self._schemas: list[dict[str, Any]] | None = None
        self._start = time.perf_counter()
        #: A step took longer than SLOW_STEP_S: the server runs the next ones in a worker thread,
        #: so that one session's desktop does not stall the others (never part of the record).
        self.slow = False

    # ------------------------------------------------------------------ playing
    def reset(self) -> None:
        """Reset the env with the request's seed (may read or solve a reference: not on the loop)."""
        try:
            obs, info = self.env.reset(seed=self.request.seed)
        except USER_ERRORS as exc:
            raise ToolError(f"cannot reset {self.request.env_id} with seed {self.request.seed}: {error_text(exc)}") from None
        self.adapter.record_reset(obs, info)
        self._info = dict(info)
        self._start = time.perf_counter()

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The env's actions as ``{"name", "description", "parameters"}``: the LLM adapter's tools
        (made once per episode: building a JSON schema takes a millisecond, a step microseconds)."""
        if self._schemas is None:
            self._schemas = [tool["function"] for tool in self.adapter.tools("openai")]
        return self._schemas

    def action_names(self) -> list[str]:
        return [schema["name"] for schema in self.tool_schemas()]

    def step(self, name: str, arguments: Any) -> StepReply:
        """Run one call in the env; an invalid one leaves the state as it was and says why."""
        if self.done:
            raise ToolError("the episode is over: start_episode starts another (observe shows how this one ended)")
        call = {"name": name, "arguments": {} if arguments is None else arguments}
        began = time.perf_counter()
        try:
            obs, reward, terminated, truncated, info = self.env.step(call)
        except Exception as exc:  # noqa: BLE001 - an env bug ends the episode, recorded with its error
            self.tally.error = f"{type(exc).__name__}: {exc}"
            self.tally.traceback = tb.format_exc()
            self.done = True
            raise ToolError(f"the env raised {self.tally.error}; the episode ends here and is recorded with the error") from None
        self.slow = self.slow or time.perf_counter() - began > SLOW_STEP_S
        valid = info.get("valid", True) is not False
        self._tally_step(float(reward), valid, info)
        if self.tally.steps >= self.request.max_steps and not terminated:
            truncated = True
        self._info = dict(info)
        self._last = (call, obs)
        self.done = bool(terminated or truncated)
        self.tally.terminated, self.tally.truncated = bool(terminated), bool(truncated)
        if not self.done:
            self.adapter.record_step(call, obs, info, terminated=False)
        data = {"valid": valid, "error": None if valid else str(info.get("error") or "rejected"),
                "reward": float(reward), "terminated": bool(terminated), "truncated": bool(truncated),
                "done": self.done, "steps": self.tally.steps, "completeness": self.tally.completeness,
                "sub_goals_passed": list(info.get("sub_goals_passed") or [])}
        text = self.adapter.result_text() if not self.done else ""
        if not self.done and self.request.state_in_replies:
            text += "\n\n" + self._state_and_moves()
            data["legal_calls"], data["more_legal_calls"] = self.legal_calls()
        return StepReply(text, data, error=not valid)

    def _tally_step(self, reward: float, valid: bool, info: dict[str, Any]) -> None:
        self.tally.episode_return += reward
        self.tally.steps += 1
        self.tally.invalid_actions += int(not valid)
        self.tally.completeness = float(info.get("completeness", 0.0))

    def abandon(self) -> None:
        """End a running episode before the env did: it is recorded as truncated."""
        if not self.done:
            self.done = True
            self.tally.terminated, self.tally.truncated = False, True

    def finish(self) -> EpisodeResult:
        """The episode's record with its final metrics (the env's deferred solves run here)."""
        tally = self.tally
        if not self.finished:
            self.finished = True
            if tally.error is None:
                try:
                    settle_episode(self.env, tally, self._info, None)
                except Exception as exc:  # noqa: BLE001 - recorded as `crab-gym run` records it
                    tally.error = f"{type(exc).__name__}: {exc}"
                    tally.traceback = tb.format_exc()
            tally.success = tally.error is None and episode_success(tally.terminated, tally.completeness, tally.metrics)
            tally.wall_time_s = time.perf_counter() - self._start
            if self._last is not None and tally.error is None:  # the words of the end, with the final metrics
                call, obs = self._last
                self.adapter.record_step(call, obs, {**self._info, "metrics": tally.metrics}, terminated=tally.terminated)
        return tally

    def close(self) -> None:
        self.env.close()

    # ------------------------------------------------------------------ words
    def _state_and_moves(self) -> str:
        parts = ["# Current state\n" + self.adapter.state_text()]
        legal = self.adapter.legal_actions_text()
        if legal:
            parts.append("# Legal calls now\n" + legal)
        return "\n\n".join(parts)

    def observation(self) -> tuple[str, dict[str, Any]]:
        """The state in words (task, state, last call, legal calls) and the same as data."""
        header = (f"# Episode\n{self.request.env_id} {self.request.env_kwargs or ''} seed {self.request.seed}, "
                  f"recorded as {self.request.agent!r} episode {self.tally.index}; "
                  f"{self.tally.steps} of at most {self.request.max_steps} calls made"
                  + ("; the episode is over" if self.done else ""))
        legal, more = self.legal_calls()
        data = {**self.describe(), "task": self.adapter.task_text(), "state": self.adapter.state_text(),
                "last_action": self.adapter.result_text(), "legal_calls": legal, "more_legal_calls": more,
                "free_form_actions": self.free_form_actions()}
        return header + "\n\n" + self.adapter.prompt(), data

    def legal_calls(self) -> tuple[list[dict[str, Any]], int]:
        """The finite calls legal now (``action_masks()``), and how many more were left out."""
        base = self.env.unwrapped
        if self.done or not base.codec.n_flat:
            return [], 0
        legal = np.flatnonzero(np.asarray(base.action_masks(), dtype=bool))
        calls = [base.codec.flat_to_call(int(i)) for i in legal[:MAX_LEGAL_CALLS]]
        return calls, max(0, int(legal.size) - MAX_LEGAL_CALLS)

    def free_form_actions(self) -> list[str]:
        """Actions whose arguments are not a finite choice (``submit_plan``): never in the mask."""
        codec = self.env.unwrapped.codec
        return [a.name for a in codec.actions if not codec.is_finite(a.name)]

    def describe(self) -> dict[str, Any]:
        """Who this episode is: what it runs, how far it is, and (at the end) how it scored."""
        tally = self.tally
        data = {"env_id": tally.env_id, "env_kwargs": dict(tally.env_kwargs), "seed": tally.seed,
                "agent": tally.policy, "index": tally.index, "max_steps": self.request.max_steps,
                "instance": _instance_name(self.env), "steps": tally.steps, "done": self.done,
                "completeness": tally.completeness, "episode_return": tally.episode_return}
        if self.finished:
            data["result"] = record_view(tally)
        return data


def record_view(result: EpisodeResult) -> dict[str, Any]:
    """The episode record as the reply shows it (the traceback stays in the file)."""
    view = result.to_dict()
    view.pop("traceback", None)
    return view


def _instance_name(env: gym.Env) -> str | None:
    """A REALM env's instance name, or a desktop's task id (``x_copy_file#1``: template and seed)."""
    base = env.unwrapped
    name = getattr(getattr(base, "instance", None), "name", None)
    if name is None:
        name = getattr(getattr(base, "task", None), "id", None)
    return str(name) if name is not None else None
