"""LLMAgent: a policy that plays any crab_gym env through an OpenAI-compatible chat API.

It speaks plain chat completions with tool calling, which vLLM, Ollama, llama.cpp's server,
LM Studio, SGLang and the hosted APIs all serve, using the ``openai`` client (the ``llm``
extra). The env's Actions become the tools; each tool result is the adapter's text: what the
call did (or why it was rejected) and the new state. One tool call is executed per step; the
conversation is kept (optionally only its last turns) until the episode ends or the step limit.

HTTP policy: the agent retries connection errors, timeouts, 408, 409, 429 and 5xx up to
``max_retries`` times with exponential backoff (honouring ``Retry-After``); what still fails
raises :class:`LLMAgentError` naming the status, the server and a likely fix. Other 4xx
statuses are not retried. The retries are the agent's (the client it builds does none) so
that each attempt passes the rate limit (``max_rps``), which all the agents of a process
talking to one endpoint share.

Concurrency: many agents can run as threads of one process (``crab-gym run --policy llm
--workers N``). While a request is in flight the agent gives its CPU turn away
(:func:`crab_gym.evaluation.cpu_turn.io_wait`), so env steps of other episodes run meanwhile, one
at a time. ``usage`` counts tokens, requests and the seconds spent waiting on the model:
REALM's resource-usage metric, which the benchmark records per episode (never in ``info``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from crab_gym._optional import require
from crab_gym.baselines.request_pacing import RateLimiter, is_retryable, retry_delay, shared_rate_limiter
from crab_gym.evaluation.cpu_turn import io_wait
from crab_gym.evaluation.outcome import InfrastructureError
from crab_gym.wrappers.llm_adapter import LLMAdapter
from crab_gym.wrappers.tool_call_parsing import ToolCallParseError, parse_tool_call

DEFAULT_SYSTEM_PROMPT = (
    "You are an agent solving a planning task by calling tools. Call exactly one tool per turn. "
    "After each call you receive its result (or the error to fix) and the new state. "
    "Keep calling tools until the task is complete."
)

#: Environment variables read when the constructor leaves a setting out.
MODEL_ENV = "CRAB_GYM_LLM_MODEL"
BASE_URL_ENV = "OPENAI_BASE_URL"


class LLMAgentError(InfrastructureError):
    """The chat endpoint failed (after the client's retries) or answered something unusable.
    An infrastructure failure (a :class:`~crab_gym.evaluation.outcome.InfrastructureError`, a
    ``RuntimeError``): the episode measured nothing about the model's planning, so the report
    leaves it out of the means and ``crab-gym run --retry-errors`` runs it again."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


@dataclass
class LLMEpisode:
    """The outcome of :meth:`LLMAgent.run`.

    ``stop_reason`` is ``"terminated"`` (the env ended the episode), ``"truncated"`` (the env or
    the adapter's consecutive-error limit cut it) or ``"step_limit"`` (the agent's ``max_steps``).
    """

    episode_return: float
    steps: int
    invalid_actions: int
    terminated: bool
    truncated: bool
    stop_reason: str
    info: dict[str, Any]
    messages: list[dict[str, Any]]
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def completed(self) -> bool:
        """Every sub-goal met when the episode ended."""
        return self.terminated and float(self.info.get("completeness", 0.0)) >= 1.0


class LLMAgent:
    """An LLM policy over an OpenAI-compatible chat-completions endpoint.

    Use :meth:`run` to play one episode, or call the agent as a ``policy(observation, info)``
    (the :class:`~crab_gym.evaluation.benchmark.Benchmark` protocol) on a raw env or an
    :class:`~crab_gym.wrappers.LLMAdapter`.

    Args:
        env: the env it will act in (optional here; :meth:`run` and :meth:`reset` take one).
        model: model name on the server; default ``$CRAB_GYM_LLM_MODEL``.
        base_url: e.g. ``http://localhost:8000/v1`` (vLLM); default ``$OPENAI_BASE_URL``, else
            the OpenAI API.
        api_key: default ``$<api_key_env>``; local servers without auth get a placeholder.
        api_key_env: the environment variable holding the key (``OPENAI_API_KEY``).
        client: a ready ``openai.OpenAI`` (or compatible) client; overrides the four above
            except ``model``.
        max_steps: step limit per episode in :meth:`run` (the episode is then truncated).
        temperature: sampling temperature (0: as deterministic as the server allows).
        max_tokens: cap on each reply's tokens (None: the server's default).
        max_retries: retries of failed HTTP requests (connection, 408/409/429/5xx), with
            exponential backoff.
        timeout: seconds per HTTP request.
        max_rps: at most this many requests per second to this endpoint, shared by every
            agent of the process with the same ``base_url`` and rate (None: no limit).
        rate_limiter: a ready :class:`RateLimiter` (overrides ``max_rps``).
        use_tools: pass the Actions as ``tools`` (native tool calling). False: describe them in
            the prompt and read a JSON call from the reply text (servers without tool calling).
        tool_choice: sent as ``tool_choice`` when not None (e.g. ``"required"``).
        system_prompt: replaces :data:`DEFAULT_SYSTEM_PROMPT`.
        max_history_turns: send only the system prompt, the first user message and the last
            this-many turns (each tool result repeats the full state). None: everything.
        max_consecutive_errors: the adapter :meth:`run` builds truncates after this many
            rejected calls in a row.
        request_kwargs: extra arguments of ``chat.completions.create`` (``seed``, ``top_p``,
            ``extra_body``, ``parallel_tool_calls``, ...).
    """

    def __init__(
        self,
        env: gym.Env | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        client: Any = None,
        max_steps: int = 200,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        max_retries: int = 2,
        timeout: float = 120.0,
        use_tools: bool = True,
        tool_choice: str | dict[str, Any] | None = None,
        system_prompt: str | None = None,
        max_history_turns: int | None = None,
        max_consecutive_errors: int | None = 10,
        request_kwargs: Mapping[str, Any] | None = None,
        max_rps: float | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.model = model or os.environ.get(MODEL_ENV)
        if not self.model:
            raise ValueError(f"LLMAgent needs a model name: pass model=... or set ${MODEL_ENV}")
        self.base_url = base_url or os.environ.get(BASE_URL_ENV)
        self.max_retries = int(max_retries)
        if client is None:
            client = _make_client(self.base_url, api_key or os.environ.get(api_key_env), api_key_env, timeout)
        self.client = client
        self.max_steps = int(max_steps)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.use_tools = bool(use_tools)
        self.tool_choice = tool_choice
        self.system_prompt = system_prompt or DEFAULT_SYSTEM_PROMPT
        self.max_history_turns = max_history_turns
        self.max_consecutive_errors = max_consecutive_errors
        self.request_kwargs = dict(request_kwargs or {})
        if rate_limiter is None and max_rps is not None:
            rate_limiter = shared_rate_limiter(self.base_url or "openai", float(max_rps))
        self.rate_limiter = rate_limiter
        self._sleep: Callable[[float], None] = time.sleep
        self.name = f"llm:{self.model}"
        self.messages: list[dict[str, Any]] = []
        self.usage: dict[str, Any] = {}
        self._adapter: LLMAdapter | None = None
        self._drives_raw_env = False
        self._open_calls: list[str] = []  # tool_call ids of the last assistant message
        self._last_action: Any = None
        self._last_call: dict[str, Any] | None = None
        self._last_parse_error: str | None = None
        if env is not None:
            self.reset(env)

    # ================================================================== episode API
    def run(
        self,
        env: gym.Env,
        *,
        seed: int | None = None,
        options: dict[str, Any] | None = None,
        max_steps: int | None = None,
    ) -> LLMEpisode:
        """Play one episode of ``env`` (wrapped in an :class:`LLMAdapter` unless it is one)."""
        adapter = _find_adapter(env)
        if adapter is None:
            adapter = LLMAdapter(env, tools_in_prompt=not self.use_tools,
                                 max_consecutive_errors=self.max_consecutive_errors)
            env = adapter
        limit = self.max_steps if max_steps is None else int(max_steps)
        attach = _find_attr(env, "attach_llm")  # e.g. a TrajectoryLogger around the adapter
        observation, info = env.reset(seed=seed, options=options)
        self.reset(env)
        total, steps, invalid = 0.0, 0, 0
        terminated = truncated = False
        while not (terminated or truncated) and steps < limit:
            logged = len(self.messages)
            action = self(observation, info)
            if attach is not None:  # this step's messages: the last result, the new reply
                attach(messages=self.messages[logged:], tool_call=self._last_call, usage=dict(self.usage))
            observation, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            steps += 1
            invalid += int(info.get("valid", True) is False)
        self._close_turn(adapter)
        reason = "terminated" if terminated else "truncated" if truncated else "step_limit"
        return LLMEpisode(
            episode_return=total,
            steps=steps,
            invalid_actions=invalid,
            terminated=bool(terminated),
            truncated=bool(truncated) or reason == "step_limit",
            stop_reason=reason,
            info=dict(info),
            messages=list(self.messages),
            usage=dict(self.usage),
        )

    def reset(self, env: gym.Env | None = None) -> None:
        """Forget the conversation; bind to ``env`` (an adapter, or a raw env to write prompts for)."""
        if env is not None:
            adapter = _find_adapter(env)
            self._drives_raw_env = adapter is None
            if adapter is None:
                adapter = LLMAdapter(env, tools_in_prompt=not self.use_tools)
            self._adapter = adapter
        self.messages = []
        self.usage = {}
        self._open_calls = []
        self._last_action = None
        self._last_call = None
        self._last_parse_error = None

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any:
        """The next action: a tool-call dict, or the model's raw reply when it holds none
        (the env/adapter rejects it and the error is fed back on the next call)."""
        if self._adapter is None:
            raise RuntimeError("LLMAgent does not know its env: pass env= or call reset(env) first")
        adapter = self._adapter
        if self._drives_raw_env:  # keep the prompt writer in step with the raw env
            if not self.messages:
                adapter.record_reset(observation, info)
            else:
                adapter.record_step(self._last_action, observation, info, parse_error=self._last_parse_error)
        if not self.messages:
            self.messages = [
                {"role": "system", "content": self._system_text(adapter)},
                {"role": "user", "content": self._opening_text(adapter)},
            ]
        else:
            self._close_turn(adapter)
        reply = self._complete()
        self.messages.append(reply)
        call, raw, error = self._action_from(reply)
        self._last_call, self._last_parse_error = call, error
        if self._drives_raw_env:  # a raw env takes dicts; raw text it rejects, unchanged
            self._last_action = call if call is not None else raw
        else:  # the adapter's actions are text: the reply as it came (the adapter parses it)
            self._last_action = raw if isinstance(raw, str) else json.dumps(raw)
        return self._last_action

    # ================================================================== conversation
    def _system_text(self, adapter: LLMAdapter) -> str:
        text = self.system_prompt
        if not self.use_tools:
            text += "\n\nTools:\n" + adapter.tools_text()
            text += '\n\nReply with exactly one tool call as JSON: {"name": "<tool name>", "arguments": {...}}'
        return text

    def _opening_text(self, adapter: LLMAdapter) -> str:
        parts = ["# Task\n" + adapter.task_text(), "# Current state\n" + adapter.state_text()]
        legal = adapter.legal_actions_text()
        if legal:
            parts.append("# Legal calls now\n" + legal)
        return "\n\n".join(parts)

    def _feedback_text(self, adapter: LLMAdapter) -> str:
        parts = ["# Result\n" + adapter.result_text(), "# Current state\n" + adapter.state_text()]
        legal = adapter.legal_actions_text()
        if legal:
            parts.append("# Legal calls now\n" + legal)
        return "\n\n".join(parts)

    def _close_turn(self, adapter: LLMAdapter) -> None:
        """Answer the last assistant message: its tool calls get tool results, text gets a user turn."""
        if not self.messages or self.messages[-1].get("role") != "assistant":
            return
        feedback = self._feedback_text(adapter)
        if self._open_calls:
            first, *rest = self._open_calls
            self.messages.append({"role": "tool", "tool_call_id": first, "content": feedback})
            for call_id in rest:
                self.messages.append({
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": "Not executed: only the first tool call of a reply runs. Call one tool per turn.",
                })
        else:
            self.messages.append({"role": "user", "content": feedback})
        self._open_calls = []

    def _action_from(self, reply: dict[str, Any]) -> tuple[dict[str, Any] | None, Any, str | None]:
        """(parsed call or None, the raw call -- text or ``{"name", "arguments"}`` --, parse
        error or None) from an assistant message."""
        tool_calls = reply.get("tool_calls") or []
        self._open_calls = [str(c.get("id", "")) for c in tool_calls]
        if tool_calls:
            function = tool_calls[0]["function"]
            raw: Any = {"name": function["name"], "arguments": _maybe_json(function["arguments"])}
        else:
            raw = reply.get("content") or ""
        try:
            return parse_tool_call(raw), raw, None
        except ToolCallParseError as exc:
            return None, raw, str(exc)

    def _request_messages(self) -> list[dict[str, Any]]:
        if self.max_history_turns is None:
            return self.messages
        turns = [i for i, m in enumerate(self.messages) if m.get("role") == "assistant" and i >= 2]
        if len(turns) <= self.max_history_turns:
            return self.messages
        cut = turns[-self.max_history_turns] if self.max_history_turns > 0 else len(self.messages)
        return self.messages[:2] + self.messages[cut:]

    def _complete(self) -> dict[str, Any]:
        """One chat-completions request; the assistant message as a plain dict."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": self._request_messages()}
        if self.use_tools:
            kwargs["tools"] = self._adapter.tools("openai")
            if self.tool_choice is not None:
                kwargs["tool_choice"] = self.tool_choice
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        kwargs.update(self.request_kwargs)
        with io_wait():  # other episodes' env steps run while this one waits on the server
            response = self._request_with_retries(kwargs)
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LLMAgentError(f"{self.base_url or 'the API'} returned no choices for model {self.model!r}")
        self._add_usage(getattr(response, "usage", None))
        return _assistant_dict(choices[0].message)

    def _request_with_retries(self, kwargs: dict[str, Any]) -> Any:
        """One completion: paced by the rate limit, retried with backoff when worth it."""
        for attempt in range(self.max_retries + 1):
            if self.rate_limiter is not None:
                self.rate_limiter.acquire()
            started = time.perf_counter()
            try:
                return self.client.chat.completions.create(**kwargs)
            except Exception as exc:  # the openai client's errors, translated with a hint
                if attempt < self.max_retries and is_retryable(exc):
                    self._sleep(retry_delay(exc, attempt))
                    continue
                translated = _translate_error(exc, self.base_url, self.model, self.max_retries)
                if translated is exc:
                    raise
                raise translated from exc
            finally:
                self.usage["requests"] = self.usage.get("requests", 0) + 1
                self.usage["latency_s"] = self.usage.get("latency_s", 0.0) + time.perf_counter() - started
        raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover

    def _add_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = getattr(usage, key, None)
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value


# ====================================================================== helpers
def _find_adapter(env: gym.Env) -> LLMAdapter | None:
    """The LLMAdapter in ``env``'s wrapper chain (outermost first), if any."""
    current: Any = env
    while current is not None:
        if isinstance(current, LLMAdapter):
            return current
        current = getattr(current, "env", None)
    return None


def _find_attr(env: gym.Env, name: str) -> Any:
    """``name`` on the first wrapper of ``env``'s chain that defines it (None if none does)."""
    current: Any = env
    while current is not None:
        if any(name in vars(klass) for klass in type(current).__mro__) or name in getattr(current, "__dict__", {}):
            return getattr(current, name)
        current = getattr(current, "env", None)
    return None


def _maybe_json(arguments: Any) -> Any:
    """Tool-call arguments as an object when they are valid JSON, else the raw string (so the
    parse error reaches the model)."""
    if not isinstance(arguments, str):
        return arguments
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _assistant_dict(message: Any) -> dict[str, Any]:
    """An SDK message object -> the plain dict sent back in the next request."""
    out: dict[str, Any] = {"role": "assistant", "content": getattr(message, "content", None)}
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        calls.append({
            "id": getattr(call, "id", None) or f"call_{len(calls)}",
            "type": "function",
            "function": {
                "name": getattr(function, "name", None) or "",
                "arguments": getattr(function, "arguments", None) or "",
            },
        })
    if calls:
        out["tool_calls"] = calls
    return out


def _make_client(base_url: str | None, api_key: str | None, api_key_env: str, timeout: float) -> Any:
    openai = require("openai", "llm")  # imported on first use: the optional llm extra
    if not api_key:
        if base_url is None:
            raise ValueError(
                f"no API key: set ${api_key_env}, pass api_key=..., or point base_url at a local server"
            )
        api_key = "EMPTY"  # local servers (vLLM, Ollama, llama.cpp) accept any key by default
    # no retries in the client: the agent retries, through its rate limit
    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)


_HINTS = {
    400: "the server rejected the request; if it mentions tools, the model or server lacks tool "
    "calling (vLLM: --enable-auto-tool-choice --tool-call-parser <parser>; llama.cpp: --jinja) "
    "or use LLMAgent(use_tools=False)",
    401: "check the API key (api_key=... or the api_key_env variable)",
    403: "the key is not allowed to use this model",
    404: "check base_url (it usually ends in /v1) and the model name",
    429: "rate limited: wait, or raise max_retries",
}


def _translate_error(exc: Exception, base_url: str | None, model: str, max_retries: int) -> Exception:
    where = base_url or "the OpenAI API"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        detail = _error_detail(exc)
        hint = _HINTS.get(status, "server error" if status >= 500 else "")
        retried = f" after {max_retries} retries" if status in (408, 409, 429) or status >= 500 else ""
        msg = f"chat completion for model {model!r} at {where} failed with HTTP {status}{retried}: {detail}"
        return LLMAgentError(msg + (f" ({hint})" if hint else ""), status_code=status)
    name = type(exc).__name__
    if "Connection" in name or "Timeout" in name:
        return LLMAgentError(f"cannot reach {where} ({name} after {max_retries} retries): {exc}")
    if type(exc).__module__.split(".")[0] == "openai":
        return LLMAgentError(f"chat completion at {where} failed: {name}: {exc}")
    return exc  # not the client's: a bug to see as it is


def _error_detail(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        err = body.get("error", body)
        if isinstance(err, Mapping) and err.get("message"):
            return str(err["message"])
        return json.dumps(body)[:500]
    return str(getattr(exc, "message", None) or exc)[:500]


__all__ = ["DEFAULT_SYSTEM_PROMPT", "LLMAgent", "LLMAgentError", "LLMEpisode"]
