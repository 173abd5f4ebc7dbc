"""Action schemas -> Gymnasium spaces, and tool calls <-> space elements.

RL policies act through Gymnasium spaces, LLM agents through tool calls. Deriving the space
from the very JSON schema the LLM sees, and converting both ways through one codec, makes
both kinds of policy drive the *same* actions with the same validation.

Mapping (per parameter schema):

============================  ==========================================================
schema                        space / element
============================  ==========================================================
``enum`` (Literal, Enum)      ``Discrete(len(enum))``, the index of the value
``boolean``                   ``Discrete(2)``: 0 = false, 1 = true
``integer`` with both bounds  ``Discrete(hi - lo + 1, start=lo)``, the value itself
``number`` with both bounds   ``Box(lo, hi, (1,), float64)``
``string``                    :class:`AnyText`: accepts any string
``array``                     :class:`BoundedSequence` of the item space (a tuple)
``object`` with properties    ``Dict`` of the properties' spaces
============================  ==========================================================

Anything else (unbounded numbers, ``Optional``, free-key maps) raises
:class:`UnsupportedParameterError` naming the action and the parameter.
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from crab_gym.core.action import Action, ActionArgumentError

_SAMPLE_CHARSET = string.ascii_letters + string.digits + " _-"


class UnsupportedParameterError(TypeError):
    """A parameter type that has no Gymnasium space here; names action and parameter."""

    def __init__(self, action: str, parameter: str, schema: Mapping[str, Any], why: str) -> None:
        super().__init__(
            f"action '{action}', parameter '{parameter}': cannot derive a Gymnasium space ({why}); "
            f"schema was {json.dumps(schema, default=str)}"
        )
        self.action, self.parameter = action, parameter


class AnyText(spaces.Text):
    """A ``Text`` space that contains *any* string within its length bounds.

    Gymnasium's ``Text`` only accepts characters of its charset; tool arguments are free text
    (paths, sentences, JSON), so membership ignores the charset. Sampling still draws from a
    small readable charset.
    """

    def __init__(self, max_length: int = 4096, *, min_length: int = 0, sample_max_length: int = 16) -> None:
        super().__init__(max_length, min_length=min_length, charset=_SAMPLE_CHARSET)
        self.sample_max_length = max(min(sample_max_length, max_length), min_length)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        length = int(self.np_random.integers(self.min_length, self.sample_max_length + 1))
        chars = self.np_random.choice(list(_SAMPLE_CHARSET), size=length)
        return "".join(chars)

    def __repr__(self) -> str:
        return f"AnyText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, AnyText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )


class BoundedSequence(spaces.Sequence):
    """A ``Sequence`` whose length obeys the schema's ``minItems``/``maxItems``."""

    def __init__(self, item: spaces.Space, *, min_items: int = 0, max_items: int | None = None) -> None:
        super().__init__(item, stack=False)
        self.min_items = min_items
        self.max_items = max_items

    def sample(self, mask: Any = None, probability: Any = None) -> tuple[Any, ...]:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        high = self.max_items if self.max_items is not None else max(self.min_items, 4)
        length = int(self.np_random.integers(self.min_items, high + 1))
        return tuple(self.feature_space.sample() for _ in range(length))

    def contains(self, x: Any) -> bool:
        if not super().contains(x):
            return False
        return len(x) >= self.min_items and (self.max_items is None or len(x) <= self.max_items)


# ---------------------------------------------------------------------- parameter codecs
class _Codec:
    """Converts one JSON value <-> one space element."""

    space: spaces.Space
    size: int | None = None  # number of finite choices, None if infinite

    def to_space(self, value: Any) -> Any:
        raise NotImplementedError

    def from_space(self, element: Any) -> Any:
        raise NotImplementedError

    def value_at(self, index: int) -> Any:  # finite codecs only
        raise NotImplementedError

    def index_of(self, value: Any) -> int:  # finite codecs only
        raise NotImplementedError


class _EnumCodec(_Codec):
    def __init__(self, values: Sequence[Any]) -> None:
        self.values = list(values)
        self.space = spaces.Discrete(len(self.values))
        self.size = len(self.values)

    def index_of(self, value: Any) -> int:
        for i, candidate in enumerate(self.values):
            if candidate == value and type(candidate) is type(value):
                return i
        raise ValueError(f"{value!r} is not one of {self.values}")

    def to_space(self, value: Any) -> np.int64:
        return np.int64(self.index_of(value))

    def from_space(self, element: Any) -> Any:
        return self.values[int(element)]

    def value_at(self, index: int) -> Any:
        return self.values[index]


class _IntCodec(_Codec):
    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high
        self.space = spaces.Discrete(high - low + 1, start=low)
        self.size = high - low + 1

    def to_space(self, value: Any) -> np.int64:
        return np.int64(value)

    def from_space(self, element: Any) -> int:
        return int(element)

    def value_at(self, index: int) -> int:
        return self.low + index

    def index_of(self, value: Any) -> int:
        return int(value) - self.low


class _FloatCodec(_Codec):
    def __init__(self, low: float, high: float) -> None:
        self.space = spaces.Box(low=low, high=high, shape=(1,), dtype=np.float64)

    def to_space(self, value: Any) -> np.ndarray:
        return np.array([float(value)], dtype=np.float64)

    def from_space(self, element: Any) -> float:
        return float(np.asarray(element, dtype=np.float64).reshape(-1)[0])


class _TextCodec(_Codec):
    def __init__(self, min_length: int, max_length: int) -> None:
        self.space = AnyText(max_length, min_length=min_length)

    def to_space(self, value: Any) -> str:
        return str(value)

    def from_space(self, element: Any) -> str:
        return str(element)


class _SequenceCodec(_Codec):
    def __init__(self, item: _Codec, min_items: int, max_items: int | None) -> None:
        self.item = item
        self.space = BoundedSequence(item.space, min_items=min_items, max_items=max_items)

    def to_space(self, value: Any) -> tuple[Any, ...]:
        return tuple(self.item.to_space(v) for v in value)

    def from_space(self, element: Any) -> list[Any]:
        return [self.item.from_space(v) for v in element]


class _ObjectCodec(_Codec):
    def __init__(self, fields: dict[str, _Codec]) -> None:
        self.fields = fields
        self.space = spaces.Dict({name: codec.space for name, codec in fields.items()})

    def to_space(self, value: Mapping[str, Any]) -> dict[str, Any]:
        return {name: codec.to_space(value[name]) for name, codec in self.fields.items()}

    def from_space(self, element: Mapping[str, Any]) -> dict[str, Any]:
        return {name: codec.from_space(element[name]) for name, codec in self.fields.items()}


def _int_codec(schema: Mapping[str, Any], action: str, param: str) -> _Codec:
    """An integer schema's codec; both bounds are required (a Discrete needs a size)."""
    low = schema.get("minimum", None)
    high = schema.get("maximum", None)
    if "exclusiveMinimum" in schema:
        low = int(math.floor(schema["exclusiveMinimum"])) + 1
    if "exclusiveMaximum" in schema:
        high = int(math.ceil(schema["exclusiveMaximum"])) - 1
    if low is None or high is None:
        raise UnsupportedParameterError(action, param, schema, "an integer needs both bounds (ge/le)")
    low, high = int(math.ceil(low)), int(math.floor(high))
    if high < low:
        raise UnsupportedParameterError(action, param, schema, "empty integer range")
    return _IntCodec(low, high)


def _float_codec(schema: Mapping[str, Any], action: str, param: str) -> _Codec:
    """A number schema's codec; both bounds are required (a Box needs finite limits)."""
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is None or high is None:
        raise UnsupportedParameterError(action, param, schema, "a number needs both bounds (ge/le)")
    if "exclusiveMinimum" in schema:
        low = math.nextafter(float(low), math.inf)
    if "exclusiveMaximum" in schema:
        high = math.nextafter(float(high), -math.inf)
    return _FloatCodec(float(low), float(high))


def _array_codec(schema: Mapping[str, Any], action: str, param: str) -> _Codec:
    """An array schema's codec, over the codec of its one item schema."""
    items = schema.get("items")
    if not isinstance(items, Mapping):
        raise UnsupportedParameterError(action, param, schema, "an array needs one item schema")
    item = _codec_for(items, action, f"{param}[]")
    return _SequenceCodec(item, int(schema.get("minItems", 0)), schema.get("maxItems"))


def _object_codec(schema: Mapping[str, Any], action: str, param: str) -> _Codec:
    """An object schema's codec, one codec a property; free keys have no fixed space."""
    extra = schema.get("additionalProperties", False)
    if extra not in (False, None):
        raise UnsupportedParameterError(action, param, schema, "objects with free keys")
    return _ObjectCodec(
        {name: _codec_for(sub, action, f"{param}.{name}") for name, sub in schema["properties"].items()}
    )


def _codec_for(schema: Mapping[str, Any], action: str, param: str) -> _Codec:
    """Build the codec for one parameter schema (recursively for arrays and objects)."""
    if "enum" in schema:
        return _EnumCodec(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return _EnumCodec([False, True])
    if kind == "integer":
        return _int_codec(schema, action, param)
    if kind == "number":
        return _float_codec(schema, action, param)
    if kind == "string":
        return _TextCodec(int(schema.get("minLength", 0)), int(schema.get("maxLength", 4096)))
    if kind == "array":
        return _array_codec(schema, action, param)
    if kind == "object" and isinstance(schema.get("properties"), Mapping):
        return _object_codec(schema, action, param)
    raise UnsupportedParameterError(action, param, schema, "unsupported type")


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr`` cut to ``limit`` characters (error messages must stay one readable line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _outside_one_of(space: spaces.OneOf, x: Any, path: str, where: str) -> str | None:
    """Why ``x`` is not an (action index, arguments) pair of ``space``, or its arguments' reason."""
    if not (isinstance(x, tuple) and len(x) == 2):
        return f"{where}expected an (action index, arguments) pair, got {short_repr(x)}"
    index = x[0]
    if isinstance(index, bool) or not isinstance(index, (int, np.int64)):
        return f"{where}the action index must be an int, got {type(index).__name__} {short_repr(index)}"
    if not 0 <= index < len(space.spaces):
        return f"{where}action index {index} is out of range 0..{len(space.spaces) - 1}"
    return explain_outside(space.spaces[int(index)], x[1], path)


def _outside_dict(space: spaces.Dict, x: Any, path: str, where: str) -> str | None:
    """Why ``x`` is not a dict of ``space``'s keys: the keys first, then the first bad value."""
    if not isinstance(x, dict):
        return f"{where}expected a dict of arguments, got {type(x).__name__}"
    missing = [k for k in space.spaces if k not in x]
    if missing:
        return f"{where}missing key {missing[0]!r}"
    extra = [k for k in x if k not in space.spaces]
    if extra:
        return f"{where}unexpected key {short_repr(extra[0])}; keys are {list(space.spaces)}"
    for key, sub in space.spaces.items():
        reason = explain_outside(sub, x[key], f"{path}.{key}" if path else str(key))
        if reason:
            return reason
    return None


def _outside_discrete(space: spaces.Discrete, x: Any, path: str, where: str) -> str | None:
    """Why ``x`` is not in ``space``: not an integer, or out of its range."""
    lo, hi = int(space.start), int(space.start) + int(space.n) - 1
    integer = isinstance(x, int) or (
        isinstance(x, (np.generic, np.ndarray)) and np.issubdtype(x.dtype, np.integer) and x.shape == ()
    )
    if not integer:
        return f"{where}expected an integer in {lo}..{hi}, got {type(x).__name__} {short_repr(x)}"
    return f"{where}{int(x)} is out of range {lo}..{hi}"


def _outside_box(space: spaces.Box, x: Any, path: str, where: str) -> str | None:
    """Why ``x`` is not in ``space``: type, shape, dtype, then the bounds."""
    if not isinstance(x, np.ndarray):
        return f"{where}expected a numpy array of shape {space.shape}, got {type(x).__name__} {short_repr(x)}"
    if x.shape != space.shape:
        return f"{where}expected shape {space.shape}, got {x.shape}"
    if not np.can_cast(x.dtype, space.dtype):
        return f"{where}dtype {x.dtype} cannot be cast to {space.dtype}"
    return f"{where}{short_repr(x.tolist())} is outside [{space.low.tolist()}, {space.high.tolist()}] (or not finite)"


def _outside_text(space: spaces.Text, x: Any, path: str, where: str) -> str | None:
    """Why ``x`` is not in ``space``: not a string, or its length is out of bounds."""
    if not isinstance(x, str):
        return f"{where}expected a string, got {type(x).__name__} {short_repr(x)}"
    return f"{where}string length {len(x)} is outside {space.min_length}..{space.max_length}"


def _outside_sequence(space: spaces.Sequence, x: Any, path: str, where: str) -> str | None:
    """Why ``x`` is not in ``space``: not a tuple, a bad item, or (bounded) its length."""
    if not isinstance(x, tuple):
        return f"{where}expected a tuple, got {type(x).__name__}"
    for i, item in enumerate(x):
        reason = explain_outside(space.feature_space, item, f"{path}[{i}]")
        if reason:
            return reason
    if isinstance(space, BoundedSequence):
        return f"{where}length {len(x)} is outside {space.min_items}..{space.max_items}"
    return None


# The kinds of space ActionCodec builds, most specific first (BoundedSequence is a Sequence).
_OUTSIDE: tuple[tuple[type[spaces.Space], Callable[..., str | None]], ...] = (
    (spaces.OneOf, _outside_one_of),
    (spaces.Dict, _outside_dict),
    (spaces.Discrete, _outside_discrete),
    (spaces.Box, _outside_box),
    (spaces.Text, _outside_text),
    (spaces.Sequence, _outside_sequence),
)


def explain_outside(space: spaces.Space, x: Any, path: str) -> str | None:
    """Why ``x`` is not in ``space`` (naming the offending part by ``path``), or None.

    Mirrors the membership rules of Gymnasium's spaces for the kinds :class:`ActionCodec`
    builds; returns None where it finds no reason (the caller then gives a generic one).
    """
    try:
        if space.contains(x):
            return None
    except Exception:  # noqa: BLE001
        pass
    where = f"{path}: " if path else ""
    for kind, explain in _OUTSIDE:
        if isinstance(space, kind):
            return explain(space, x, path, where)
    return None


def split_tool_call(call: Any) -> tuple[str, dict[str, Any]]:
    """``{"name", "arguments"}`` (arguments as a dict or a JSON string) -> (name, arguments)."""
    if not isinstance(call, Mapping) or "name" not in call:
        raise ActionArgumentError("?", None, f'a tool call is {{"name": ..., "arguments": {{...}}}}, got {call!r}')
    name = call["name"]
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise ActionArgumentError(str(name), None, f"arguments are not valid JSON: {exc}") from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ActionArgumentError(str(name), None, f"arguments must be an object, got {type(arguments).__name__}")
    return str(name), dict(arguments)


class ActionCodec:
    """The Gymnasium action space of a list of actions, and conversions to/from tool calls.

    Args:
        actions: the actions, in the order their ``OneOf`` indices follow.
    """

    #: a codec's tables are fixed when it is built (the env contract check skips them)
    static_attributes = ("actions", "index", "_codecs", "single", "space", "finite", "flat_offsets", "_flat_shapes",
                         "n_flat")

    def __init__(self, actions: Sequence[Action]) -> None:
        self.actions = list(actions)
        if not self.actions:
            raise ValueError("an ActionCodec needs at least one action")
        names = [a.name for a in self.actions]
        if len(set(names)) != len(names):
            raise ValueError(f"action names must be unique, got {names}")
        self.index = {name: i for i, name in enumerate(names)}
        self._codecs: list[_ObjectCodec] = []
        for act in self.actions:
            props = act.to_schema()["parameters"]["properties"]
            self._codecs.append(
                _ObjectCodec({p: _codec_for(sub, act.name, p) for p, sub in props.items()})
            )
        self.single = len(self.actions) == 1
        self.space: spaces.Space = (
            self._codecs[0].space if self.single else spaces.OneOf([c.space for c in self._codecs])
        )
        self._build_flat_index()

    # ------------------------------------------------------------------ conversions
    def action(self, name: str) -> Action:
        """The action called ``name``, or a clear error listing the available ones."""
        if name not in self.index:
            raise ActionArgumentError(name, None, f"unknown action; available: {list(self.index)}")
        return self.actions[self.index[name]]

    def encode(self, call: Mapping[str, Any]) -> Any:
        """Tool call -> space element. Fills defaults; invalid calls raise ActionArgumentError."""
        name, arguments = split_tool_call(call)
        act = self.action(name)
        json_args = act.to_json_arguments(act.validate(arguments))
        codec = self._codecs[self.index[name]]
        try:
            element = codec.to_space(json_args)
        except (ValueError, KeyError, TypeError) as exc:
            raise ActionArgumentError(name, None, f"cannot be represented in the action space: {exc}") from None
        if not codec.space.contains(element):
            raise ActionArgumentError(name, None, f"arguments {json_args} fall outside the action space")
        return element if self.single else (np.int64(self.index[name]), element)

    def contains(self, element: Any) -> bool:
        """Whether ``element`` belongs to :attr:`space` (False where ``contains`` itself raises)."""
        try:
            return bool(self.space.contains(element))
        except Exception:  # noqa: BLE001 - contains() itself may choke on exotic objects
            return False

    def why_outside(self, element: Any) -> str | None:
        """None if ``element`` belongs to :attr:`space`, else why not (one sentence).

        The space's own ``contains`` decides, so that "inside" means exactly what Gymnasium
        and its env checker mean; the walk only explains a refusal.
        """
        if self.contains(element):
            return None
        return explain_outside(self.space, element, "") or (
            f"{short_repr(element)} is not an element of the action space {self.space}"
        )

    def decode(self, element: Any) -> dict[str, Any]:
        """Space element -> tool call ``{"name", "arguments"}`` with JSON-compatible values.

        An element outside :attr:`space` (a negative or float index, a value out of range, a
        wrong shape, an extra key) raises :class:`ActionArgumentError` saying why: it is never
        coerced into another action.
        """
        reason = self.why_outside(element)
        if reason is not None:
            name = "?"
            if not self.single and isinstance(element, tuple) and len(element) == 2:
                index = element[0]
                if isinstance(index, (int, np.integer)) and 0 <= index < len(self.actions):
                    name = self.actions[int(index)].name
            elif self.single:
                name = self.actions[0].name
            raise ActionArgumentError(name, None, f"outside the action space: {reason}")
        idx, inner = (0, element) if self.single else (int(element[0]), element[1])
        return {"name": self.actions[idx].name, "arguments": self._codecs[idx].from_space(inner)}

    # ------------------------------------------------------------------ finite choices
    def _build_flat_index(self) -> None:
        self.finite: list[bool] = []
        self.flat_offsets: dict[str, int] = {}
        self._flat_shapes: dict[str, tuple[int, ...]] = {}
        offset = 0
        for act, codec in zip(self.actions, self._codecs):
            sizes = [c.size for c in codec.fields.values()]
            is_finite = all(isinstance(c, (_EnumCodec, _IntCodec)) for c in codec.fields.values())
            self.finite.append(is_finite)
            if is_finite:
                self.flat_offsets[act.name] = offset
                self._flat_shapes[act.name] = tuple(int(s) for s in sizes)
                offset += int(np.prod(sizes, dtype=np.int64)) if sizes else 1
        self.n_flat = offset

    def is_finite(self, name: str) -> bool:
        """Whether every parameter of action ``name`` takes finitely many values."""
        return self.finite[self.index[name]] if name in self.index else False

    def flat_to_call(self, flat: int) -> dict[str, Any]:
        """Flat index over the finite choices -> tool call."""
        flat = int(flat)
        if not 0 <= flat < self.n_flat:
            raise ActionArgumentError("?", None, f"flat action {flat} out of range 0..{self.n_flat - 1}")
        for name, offset in reversed(list(self.flat_offsets.items())):
            if flat >= offset:
                shape = self._flat_shapes[name]
                codec = self._codecs[self.index[name]]
                digits = np.unravel_index(flat - offset, shape) if shape else ()
                args = {
                    p: c.value_at(int(d)) for (p, c), d in zip(codec.fields.items(), digits)
                }
                return {"name": name, "arguments": args}
        raise AssertionError("unreachable")  # pragma: no cover

    def call_to_flat(self, call: Mapping[str, Any]) -> int:
        """Tool call of a finite action -> its flat index (defaults filled, validated)."""
        name, arguments = split_tool_call(call)
        act = self.action(name)
        if name not in self.flat_offsets:
            raise ActionArgumentError(name, None, "has non-finite parameters, so it has no flat index")
        json_args = act.to_json_arguments(act.validate(arguments))
        codec = self._codecs[self.index[name]]
        digits = [c.index_of(json_args[p]) for p, c in codec.fields.items()]
        shape = self._flat_shapes[name]
        local = int(np.ravel_multi_index(digits, shape)) if shape else 0
        return self.flat_offsets[name] + local
