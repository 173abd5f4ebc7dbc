"""Find the one tool call an LLM meant, in whatever shape it arrived.

Models and SDKs wrap a tool call in many ways: a bare JSON object, a JSON code block inside
prose, an OpenAI ``tool_calls`` entry (arguments as a JSON *string*), a whole OpenAI assistant
message, an Anthropic ``tool_use`` block or message, or the SDKs' pydantic objects for any of
these. Normalising them here keeps :class:`~crab_gym.wrappers.llm_adapter.LLMAdapter` and
:class:`~crab_gym.baselines.llm_agent.LLMAgent` model-agnostic. Every failure raises
:class:`ToolCallParseError` whose message is written *for the model*: it says what was wrong
and what shape is expected, so it can be fed back verbatim.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

#: What the adapter asks models to send; quoted in every parse error.
EXPECTED_SHAPE = 'one tool call as JSON: {"name": "<tool name>", "arguments": {...}}'

#: Keys some models use instead of "arguments" (Llama 3 uses "parameters", Anthropic "input").
_ARGUMENT_ALIASES = ("arguments", "parameters", "input", "args")

_CODE_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)


class ToolCallParseError(ValueError):
    """No single tool call could be read from the model's output (message meant for the model)."""


def parse_tool_call(action: Any) -> dict[str, Any]:
    """Return ``{"name": str, "arguments": dict}`` from any supported shape.

    Arguments that arrive as a JSON string are decoded; ill-formed ones raise. The arguments
    are *not* validated against a schema here -- the env does that and explains its own errors.

    Raises:
        ToolCallParseError: nothing, or more than one tool call, could be read; or the output
            nests deeper than :data:`MAX_NESTING` (no tool's arguments do; walking it would
            exhaust Python's recursion).
    """
    depth = nesting_depth(action)
    if depth > MAX_NESTING:
        raise ToolCallParseError(f"the output nests {depth} levels deep (at most {MAX_NESTING}): "
                                 f"no tool call is that deep; send {EXPECTED_SHAPE}")
    try:
        calls = _calls_in(_to_plain(action))
    except RecursionError:  # a shape the depth count does not see (an SDK object's own nesting)
        raise ToolCallParseError(f"the output nests too deep to read; send {EXPECTED_SHAPE}") from None
    if not calls:
        raise ToolCallParseError(f"no tool call found in {_preview(action)}; send {EXPECTED_SHAPE}")
    if len(calls) > 1:
        names = ", ".join(str(c.get("name")) for c in calls)
        raise ToolCallParseError(
            f"found {len(calls)} tool calls ({names}); send exactly one per step: {EXPECTED_SHAPE}"
        )
    return _normalise(calls[0])


#: The deepest nesting a model's output may have (brackets in text, containers in objects): the
#: deepest tool argument of any env is a few levels; Python's recursion ends near 1,000.
MAX_NESTING = 64


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """How deep ``value`` nests, counted without recursion and stopping past ``limit``: brackets
    outside JSON strings in text, containers in lists, tuples and mappings."""
    if isinstance(value, (str, bytes)):
        return _text_depth(value.decode("utf-8", "replace") if isinstance(value, bytes) else value, limit)
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = list(item.values())
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            if isinstance(item, str):
                deepest = max(deepest, depth - 1 + _text_depth(item, limit))
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _text_depth(text: str, limit: int) -> int:
    """The deepest bracket nesting of ``text`` outside double-quoted strings."""
    depth = deepest = 0
    quoted = escaped = False
    for ch in text:
        if quoted:
            escaped, quoted = (False, True) if escaped else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _to_plain(obj: Any) -> Any:
    """SDK objects (pydantic models, dataclass-like) -> plain dicts/lists, recursively."""
    if isinstance(obj, (str, bytes, int, float, bool)) or obj is None:
        return obj.decode("utf-8", "replace") if isinstance(obj, bytes) else obj
    if isinstance(obj, Mapping):
        return {str(k): _to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_plain(v) for v in obj]
    dump = getattr(obj, "model_dump", None)
    if callable(dump):  # pydantic v2 (openai / anthropic SDK objects)
        try:
            return _to_plain(dump(exclude_none=True))
        except TypeError:
            return _to_plain(dump())
    if hasattr(obj, "__dict__"):
        return _to_plain({k: v for k, v in vars(obj).items() if not k.startswith("_")})
    return obj


def _calls_in(obj: Any) -> list[dict[str, Any]]:
    """Every candidate tool call in ``obj`` (a plain structure), outermost shapes first."""
    if isinstance(obj, str):
        return _calls_in_text(obj)
    if isinstance(obj, list):
        found: list[dict[str, Any]] = []
        for item in obj:
            found.extend(_calls_in(item))
        return found
    if not isinstance(obj, dict):
        return []
    # OpenAI assistant message: {"role": "assistant", "content": ..., "tool_calls": [...]}
    if obj.get("tool_calls"):
        return _calls_in(obj["tool_calls"])
    if isinstance(obj.get("function_call"), dict):  # legacy OpenAI function calling
        return [obj["function_call"]]
    # OpenAI tool call: {"id", "type": "function", "function": {"name", "arguments"}}
    if isinstance(obj.get("function"), dict) and "name" in obj["function"]:
        return [obj["function"]]
    # Anthropic tool_use block: {"type": "tool_use", "id", "name", "input"}
    if obj.get("type") == "tool_use" and "name" in obj:
        return [obj]
    if obj.get("type") == "text" and isinstance(obj.get("text"), str):  # a text content block
        return _calls_in_text(obj["text"])
    if "name" in obj and obj.get("role") is None:
        return [obj]
    # a message without tool calls (OpenAI or Anthropic): look inside its content
    if "content" in obj:
        return _calls_in(obj["content"])
    return []


def _calls_in_text(text: str) -> list[dict[str, Any]]:
    """Tool calls in free text: the whole text as JSON, else code blocks, else bare objects."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        pass
    else:
        return _calls_in(whole) if isinstance(whole, (dict, list)) else []
    blocks = [body for lang, body in _CODE_BLOCK.findall(text) if lang.lower() in ("", "json", "tool_call", "tool")]
    found: list[dict[str, Any]] = []
    for body in blocks:
        found.extend(_json_objects(body))
    if blocks and not found:
        raise ToolCallParseError(
            f"the code block does not hold valid JSON ({_first_json_error(blocks[0])}); send {EXPECTED_SHAPE}"
        )
    if not found:
        found = _json_objects(text)
    return [c for obj in found for c in _calls_in(obj)]


def _json_objects(text: str) -> list[Any]:
    """Every top-level JSON object embedded in ``text`` (skipping what is not JSON)."""
    decoder = json.JSONDecoder()
    objects: list[Any] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        objects.append(obj)
        i = text.find("{", end)
    return objects


def _first_json_error(body: str) -> str:
    try:
        json.loads(body.strip())
    except json.JSONDecodeError as exc:
        return str(exc)
    return "no object found"


def _normalise(call: dict[str, Any]) -> dict[str, Any]:
    """``{"name", <arguments alias>}`` -> ``{"name", "arguments": dict}``; decodes JSON strings."""
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCallParseError(f'the tool call has no "name" string: {_preview(call)}; send {EXPECTED_SHAPE}')
    arguments: Any = {}
    for key in _ARGUMENT_ALIASES:
        if key in call:
            arguments = call[key]
            break
    if isinstance(arguments, str):
        text = arguments.strip()
        try:
            arguments = json.loads(text) if text else {}
        except json.JSONDecodeError as exc:
            raise ToolCallParseError(
                f"tool '{name}': the arguments are not valid JSON ({exc}): {_preview(arguments)}; "
                "send the arguments as a JSON object"
            ) from None
        if isinstance(arguments, str):  # doubly encoded by some servers
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                pass
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ToolCallParseError(
            f"tool '{name}': the arguments must be a JSON object, got {type(arguments).__name__} "
            f"{_preview(arguments)}"
        )
    return {"name": name, "arguments": dict(arguments)}


def _preview(obj: Any, limit: int = 200) -> str:
    text = obj if isinstance(obj, str) else repr(obj)
    text = " ".join(text.split())
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def call_to_text(call: Mapping[str, Any]) -> str:
    """A tool call as the canonical one-line JSON text (what sampling and logs produce)."""
    return json.dumps({"name": call["name"], "arguments": dict(call.get("arguments") or {})}, separators=(", ", ": "))


__all__ = ["EXPECTED_SHAPE", "ToolCallParseError", "call_to_text", "parse_tool_call"]

