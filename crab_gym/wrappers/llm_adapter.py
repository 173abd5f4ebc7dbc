"""LLMAdapter: any CrabEnv as a text env, so an LLM policy reads prompts and writes tool calls.

The observation is a prompt (task, current state in words, what the last call did, the legal
calls and the tools); the action is text holding one tool call. Anything the model sends --
bad JSON, an unknown tool, an out-of-range or currently illegal argument, prose with no call --
is answered, never raised: the env state stays unchanged and :attr:`LLMAdapter.last_action_error`
(also in the next prompt) tells the model what to fix.

Where the state text comes from, best first:

1. ``env.unwrapped.describe()`` -- envs write their state in words (recommended);
2. the env's ``ansi`` rendering, when its ``metadata["render_modes"]`` has ``"ansi"``;
3. a compact generic summary of the numeric observation.

The task text comes from ``env.unwrapped.task_description`` (a string or a method), else
``env.unwrapped.task.description``, else the env class's docstring.
"""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from crab_gym.core.spaces import AnyText
from crab_gym.wrappers.tool_call_parsing import (
    EXPECTED_SHAPE,
    MAX_NESTING,
    ToolCallParseError,
    _to_plain,
    call_to_text,
    nesting_depth,
    parse_tool_call,
)

#: Extra ``info`` key the adapter adds to the wrapped env's info (always present).
ADAPTER_INFO_KEYS = ("consecutive_errors",)


class ToolCallTextSpace(AnyText):
    """A ``Text`` space holding any string, whose samples are *valid* tool calls (JSON text).

    Samples draw uniformly among the env's currently legal finite choices
    (``action_masks()`` / ``codec.flat_to_call``); when there are none, they decode a sample of
    the env's own action space (schema-valid, though possibly illegal right now).
    """

    def __init__(self, env: gym.Env, max_length: int = 65_536) -> None:
        super().__init__(max_length)
        self._env_ref = weakref.ref(env.unwrapped)
        # a private copy, so that sampling never moves the env's own action-space RNG
        self._inner = copy.deepcopy(env.unwrapped.codec.space)

    def seed(self, seed: int | None = None) -> list[int]:
        seeds = super().seed(seed)
        self._inner.seed(int(self.np_random.integers(2**31 - 1)))
        return seeds

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        base = self._env_ref() if self._env_ref is not None else None
        if base is None:  # detached copy (pickled / deep-copied): plain text
            return super().sample()
        codec = base.codec
        if codec.n_flat:
            legal = np.flatnonzero(np.asarray(base.action_masks(), dtype=bool))
            if legal.size:
                return call_to_text(codec.flat_to_call(int(self.np_random.choice(legal))))
        return call_to_text(codec.decode(self._inner.sample()))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_env_ref"] = None
        return state

    def __deepcopy__(self, memo: dict[int, Any]) -> ToolCallTextSpace:
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for key, value in self.__dict__.items():
            setattr(clone, key, value if key == "_env_ref" else copy.deepcopy(value, memo))
        return clone

    def __repr__(self) -> str:
        return f"ToolCallTextSpace({self.max_length})"


class LLMAdapter(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Make a CrabEnv a text env: prompts in, one JSON tool call (text) out.

    Args:
        env: a :class:`~crab_gym.envs.base.CrabEnv`, possibly wrapped (``gym.make``).
        invalid_action_penalty: subtracted from the reward of every rejected call (a parse
            error, or a call the env rejects -- on top of the env's own penalty).
        max_consecutive_errors: truncate the episode after this many rejected calls in a row
            (None: never).
        list_legal_actions: list the currently legal finite calls in the prompt, up to this
            many per action (0: do not list them).
        tools_in_prompt: describe the tools and the reply format in the prompt (for models
            without native tool calling; :class:`~crab_gym.baselines.LLMAgent` passes the
            tools through the API instead).
        describe: ``f(env, observation) -> str`` overriding how the state is put in words.
        max_observation_length: prompts longer than this are cut in the middle of the state.
    """

    def __init__(
        self,
        env: gym.Env,
        *,
        invalid_action_penalty: float = 0.0,
        max_consecutive_errors: int | None = None,
        list_legal_actions: int = 20,
        tools_in_prompt: bool = True,
        describe: Callable[[gym.Env, Any], str] | None = None,
        max_observation_length: int = 200_000,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            invalid_action_penalty=invalid_action_penalty,
            max_consecutive_errors=max_consecutive_errors,
            list_legal_actions=list_legal_actions,
            tools_in_prompt=tools_in_prompt,
            describe=describe,
            max_observation_length=max_observation_length,
        )
        gym.Wrapper.__init__(self, env)
        base = env.unwrapped
        if getattr(base, "codec", None) is None or not hasattr(base, "tools"):
            raise TypeError(f"LLMAdapter wraps CrabEnv environments (with actions); got {type(base).__name__}")
        if max_consecutive_errors is not None and max_consecutive_errors < 1:
            raise ValueError("max_consecutive_errors must be >= 1 or None")
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.max_consecutive_errors = max_consecutive_errors
        self.list_legal_actions = int(list_legal_actions)
        self.tools_in_prompt = bool(tools_in_prompt)
        self._describe = describe
        self.observation_space = AnyText(max_observation_length)
        self.action_space = ToolCallTextSpace(env)
        self.last_action: Any = None
        self.last_tool_call: dict[str, Any] | None = None
        self.last_action_error: str | None = None
        self.consecutive_errors = 0
        self._last_obs: Any = None
        self._last_info: dict[str, Any] = {}
        self._last_passed: list[str] = []
        self._terminated = False
        self._stopped_for_errors = False
        self._started = False

    # ================================================================== gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.record_reset(obs, info)
        return self.prompt(), self._with_adapter_info(info)

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict]:
        try:
            call = parse_tool_call(action)
        except ToolCallParseError as exc:
            self.record_step(action, None, {}, parse_error=str(exc))
            info = dict(self._last_info)
            info.update({"action": None, "valid": False, "error": str(exc)})
            for key, empty in (("sub_goals_passed", []), ("metrics", {}), ("solution", {})):
                if key in info:
                    info[key] = empty
            reward = 0.0 - self.invalid_action_penalty
            return self.prompt(), reward, self._terminated, self._stopped_for_errors, self._with_adapter_info(info)
        obs, reward, terminated, truncated, info = self.env.step(call)
        self.record_step(action, obs, info, terminated=bool(terminated))
        if info.get("valid", True) is False:
            reward = float(reward) - self.invalid_action_penalty
            truncated = bool(truncated) or self._stopped_for_errors
        return self.prompt(), float(reward), bool(terminated), bool(truncated), self._with_adapter_info(info)

    # ================================================================== prompt state
    def record_reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Start the prompt state of a new episode from ``reset``'s results.

        :meth:`reset` calls this; call it yourself only when the wrapped env is driven
        directly (e.g. by a benchmark runner) and the adapter just writes prompts.
        """
        self.last_action = None
        self.last_tool_call = None
        self.last_action_error = None
        self.consecutive_errors = 0
        self._last_obs = observation
        self._last_info = dict(info)
        self._last_passed = []
        self._terminated = False
        self._stopped_for_errors = False
        self._started = False

    def record_step(
        self,
        action: Any,
        observation: Any,
        info: Mapping[str, Any],
        *,
        terminated: bool = False,
        parse_error: str | None = None,
    ) -> None:
        """Update the prompt state after a step (see :meth:`record_reset`).

        ``parse_error`` marks an action that never reached the env (``observation`` and
        ``info`` are then ignored).
        """
        self.last_action = action
        self._started = True
        if parse_error is not None:
            self.last_tool_call = None
            self._last_passed = []
            self._reject(parse_error)
            return
        self.last_tool_call = info.get("action") if isinstance(info.get("action"), Mapping) else None
        if self.last_tool_call is None:
            try:
                self.last_tool_call = parse_tool_call(action)
            except ToolCallParseError:
                self.last_tool_call = None
        self._last_obs = observation
        self._last_info = dict(info)
        self._terminated = bool(terminated)
        self._last_passed = list(info.get("sub_goals_passed") or [])
        if info.get("valid", True) is False:
            self._reject(str(info.get("error") or "the call was rejected"))
        else:
            self.last_action_error = None
            self.consecutive_errors = 0
            self._stopped_for_errors = False

    def _reject(self, reason: str) -> None:
        self.last_action_error = reason
        self.consecutive_errors += 1
        self._too_many_errors()

    def _too_many_errors(self) -> bool:
        limit = self.max_consecutive_errors
        self._stopped_for_errors = limit is not None and self.consecutive_errors >= limit
        return self._stopped_for_errors

    def _with_adapter_info(self, info: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(info)
        out["consecutive_errors"] = self.consecutive_errors
        return out

    def tools(self, fmt: Literal["openai", "anthropic"] = "openai") -> list[dict[str, Any]]:
        """The env's actions as tool definitions for an LLM API."""
        return self.env.unwrapped.tools(fmt)

    # ================================================================== prompt parts
    def prompt(self) -> str:
        """The full observation text for the current state."""
        parts = [
            "# Task\n" + self.task_text(),
            "# Current state\n" + self.state_text(),
            "# Last action\n" + self.result_text(),
        ]
        legal = self.legal_actions_text()
        if legal:
            parts.append("# Legal calls now\n" + legal)
        if self.tools_in_prompt:
            parts.append("# Tools\n" + self.tools_text())
            parts.append(f"# Reply\nReply with exactly {EXPECTED_SHAPE}")
        return self._fit("\n\n".join(parts))

    def task_text(self) -> str:
        """What the agent must achieve (see the module docstring for the sources)."""
        base = self.env.unwrapped
        text = getattr(base, "task_description", None)
        if callable(text):
            text = text()
        if not text:
            task = getattr(base, "task", None)
            text = getattr(task, "description", None)
        if not text:
            doc = (type(base).__doc__ or "").strip()
            text = doc.split("\n\n")[0] if doc else type(base).__name__
        spec = getattr(base, "spec", None)
        if spec is not None and getattr(spec, "id", None):
            text = f"({spec.id}) {text}"
        return str(text).strip()

    def state_text(self) -> str:
        """The current state in words: ``describe()``, else ANSI render, else an obs summary."""
        base = self.env.unwrapped
        if self._describe is not None:
            return str(self._describe(self.env, self._last_obs)).rstrip()
        describe = getattr(base, "describe", None)
        if callable(describe):
            return str(describe()).rstrip()
        rendered = self._ansi_text()
        if rendered:
            return rendered
        skip = ("action_mask",) if self.list_legal_actions else ()
        return summarize_observation(self._last_obs, skip=skip)

    def _ansi_text(self) -> str | None:
        """The env's ``ansi`` rendering, borrowed for one call if it was made with another mode
        (``ansi`` rendering only builds a string, so switching the mode briefly is harmless)."""
        base = self.env.unwrapped
        if "ansi" not in (getattr(base, "metadata", None) or {}).get("render_modes", ()):
            return None
        if getattr(base, "render_mode", None) == "ansi":
            rendered = self.env.render()
        else:
            saved = base.render_mode
            try:
                base.render_mode = "ansi"
                rendered = base.render()
            except Exception:  # an env whose ansi mode needs set-up: use the summary instead
                rendered = None
            finally:
                base.render_mode = saved
        return rendered.rstrip() if isinstance(rendered, str) and rendered.strip() else None

    def result_text(self) -> str:
        """What the last call did, or why it was rejected (written for the model)."""
        if not self._started:
            lines = ["None yet: this is the start of the episode."]
        elif self.last_action_error is not None:
            shown = _short(call_to_text(self.last_tool_call), 500) if self.last_tool_call else _raw_text(self.last_action)
            lines = [  # a rejected call is quoted, not echoed whole (a 3.6 MB plan came back whole)
                f"REJECTED (the state is unchanged): {shown}",
                f"Error: {_short(str(self.last_action_error), 1000)}",
            ]
            if self.consecutive_errors > 1:
                lines.append(f"That is {self.consecutive_errors} rejected calls in a row.")
        else:
            lines = [f"OK: {call_to_text(self.last_tool_call or {'name': '?'})}"]
            if self._last_passed:
                lines.append("Sub-goals passed: " + ", ".join(self._last_passed))
        completeness = self._last_info.get("completeness")
        if isinstance(completeness, (int, float)):
            lines.append(f"Progress: {100 * float(completeness):.0f}% of the sub-goals are met.")
        if self._terminated:
            lines.append("The episode is over.")
            metrics = self._last_info.get("metrics") or {}
            if metrics:
                lines.append("Metrics: " + json.dumps(_jsonable(metrics), sort_keys=True))
        elif self._stopped_for_errors:
            lines.append(f"The episode was stopped after {self.consecutive_errors} rejected calls in a row.")
        return "\n".join(lines)

    def legal_actions_text(self) -> str:
        """The currently legal finite calls, grouped per action ("" when not applicable)."""
        base = self.env.unwrapped
        codec = base.codec
        if not self.list_legal_actions or not codec.n_flat or self._terminated:
            return ""
        legal = np.flatnonzero(np.asarray(base.action_masks(), dtype=bool))
        calls: dict[str, list[dict[str, Any]]] = {}
        for flat in legal:
            call = codec.flat_to_call(int(flat))
            calls.setdefault(call["name"], []).append(call["arguments"])
        lines = []
        for name, arg_list in calls.items():
            params = list(arg_list[0])
            if len(params) == 1:  # one parameter: list its legal values compactly
                values = [a[params[0]] for a in arg_list]
                if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                    shown_values = _int_ranges(sorted(values))
                else:
                    shown_values = "{" + ", ".join(json.dumps(v) for v in values) + "}"
                lines.append(f"- {name}: {params[0]} in {shown_values}")
                continue
            if not params:
                lines.append(f"- {name} (no arguments)")
                continue
            shown = arg_list[: self.list_legal_actions]
            lines.extend(f"- {name}: {json.dumps(a)}" for a in shown)
            if len(arg_list) > len(shown):
                lines.append(f"- ... and {len(arg_list) - len(shown)} more legal {name} calls")
        infinite = [a.name for a in codec.actions if not codec.is_finite(a.name)]
        if infinite:
            lines.append("- also: " + ", ".join(infinite) + " (free-form arguments)")
        if not lines:
            return "(no legal finite call)"
        return "\n".join(lines)

    def tools_text(self) -> str:
        """One line per tool: ``name(param: type) -- description``."""
        lines = []
        for act in self.env.unwrapped.codec.actions:
            schema = act.to_schema()
            props = schema["parameters"].get("properties", {})
            required = set(schema["parameters"].get("required", []))
            params = ", ".join(
                f"{p}{'' if p in required else '?'}: {_type_text(s)}" for p, s in props.items()
            )
            lines.append(f"- {act.name}({params}) -- {schema['description']}")
        return "\n".join(lines)

    def _fit(self, text: str) -> str:
        limit = self.observation_space.max_length
        if len(text) <= limit:
            return text
        marker = "\n[... cut ...]\n"
        head = (limit - len(marker)) // 2
        return text[:head] + marker + text[len(text) - (limit - len(marker) - head) :]


# ====================================================================== text helpers
def summarize_observation(obs: Any, *, skip: tuple[str, ...] = (), max_items: int = 64) -> str:
    """A compact, deterministic text of a (dict of) array observation."""
    if isinstance(obs, Mapping):
        lines = []
        for key, value in obs.items():
            if key in skip:
                continue
            body = summarize_observation(value, max_items=max_items)
            lines.append(f"{key}: {body}" if "\n" not in body else f"{key}:\n  " + body.replace("\n", "\n  "))
        return "\n".join(lines) if lines else "(empty observation)"
    if isinstance(obs, tuple):
        return "(" + ", ".join(summarize_observation(v, max_items=max_items) for v in obs) + ")"
    if isinstance(obs, str):
        return obs
    arr = np.asarray(obs)
    if arr.dtype.kind in "biuf":
        if arr.dtype.kind == "f" and arr.size and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)  # 3.0 -> 3: shorter prompts, same meaning
        if arr.size <= max_items:
            return json.dumps(_jsonable(arr))
        finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
        if finite.size:
            rng = f"min {_num(finite.min())}, max {_num(finite.max())}, mean {_num(finite.mean())}"
        else:
            rng = "no finite values"
        return f"array of shape {tuple(arr.shape)} ({rng})"
    return _short(obs)


def _int_ranges(values: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '{0-2, 5, 7-8}'."""
    parts: list[str] = []
    start = prev = values[0]
    for v in values[1:] + [None]:  # type: ignore[list-item]
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return "{" + ", ".join(parts) + "}"


def _type_text(schema: Mapping[str, Any]) -> str:
    """A short human type of a JSON schema: 'integer 0..5', 'one of "a", "b"', 'list of ...'."""
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        return f"{kind} {_num(lo)}..{_num(hi)}" if lo is not None and hi is not None else kind
    if kind == "array":
        return "list of " + _type_text(schema.get("items", {}))
    if kind == "object" and isinstance(schema.get("properties"), Mapping):
        inner = ", ".join(f"{k}: {_type_text(v)}" for k, v in schema["properties"].items())
        return "{" + inner + "}"
    return str(kind)


def _num(x: Any) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:.4g}"


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj if isinstance(obj, (str, int, float, bool)) or obj is None else repr(obj)


def _raw_text(action: Any) -> str:
    """What the model sent, shown back to it: text as is, structures as compact JSON."""
    if isinstance(action, str):
        return _short(action)
    if nesting_depth(action) > MAX_NESTING:  # walking it would exhaust the recursion: say what it is
        return f"<a {type(action).__name__} nested more than {MAX_NESTING} levels deep>"
    plain = _to_plain(action)
    if isinstance(plain, Mapping) and isinstance(plain.get("function"), Mapping):
        plain = plain["function"]  # an OpenAI tool call: show its name and raw arguments
    try:
        return _short(json.dumps(plain, default=str))
    except (TypeError, ValueError):
        return _short(repr(action))


def _short(obj: Any, limit: int = 300) -> str:
    text = obj if isinstance(obj, str) else repr(obj)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters not shown)"


__all__ = ["ADAPTER_INFO_KEYS", "LLMAdapter", "ToolCallTextSpace", "summarize_observation"]
