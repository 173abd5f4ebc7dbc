"""Actions: typed operations with a JSON schema, validated on every call.

An :class:`Action` is the unit both an RL policy (through :mod:`crab_gym.core.spaces`) and an
LLM agent (through :meth:`Action.to_tool`) use to act. Its parameters are a pydantic model, so
every call is validated before anything runs, and the same model yields the JSON schema.

*Kept* parameters (``env`` by default) are injected at call time by whoever runs the action
(an :class:`~crab_gym.core.environment.Environment` or a :class:`~crab_gym.envs.base.CrabEnv`);
they never appear in the schema and are forwarded through every composition.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from crab_gym.core.docstrings import parse_docstring
from crab_gym.core.schema import clean_schema

#: Parameter names that are always treated as kept (injected, never in the schema).
DEFAULT_KEPT_PARAMS: frozenset[str] = frozenset({"env"})

_STRICT_CONFIG = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class ActionArgumentError(ValueError):
    """Arguments that an action rejects; names the action, the parameter and the problem."""

    def __init__(self, action: str, parameter: str | None, problem: str) -> None:
        self.action = action
        self.parameter = parameter
        self.problem = problem
        where = f"action '{action}'"
        if parameter:
            where += f", parameter '{parameter}'"
        super().__init__(f"{where}: {problem}")

    @classmethod
    def from_validation(cls, action: str, exc: ValidationError) -> ActionArgumentError:
        """Turn pydantic's report into one readable message (all errors, first one's field)."""
        problems = []
        first_param = None
        for err in exc.errors():
            loc = ".".join(str(part) for part in err.get("loc", ()))
            first_param = first_param or loc or None
            kind = err.get("type", "")
            if kind == "extra_forbidden":
                msg = "is not a parameter of this action"
            elif kind == "missing":
                msg = "is required"
            else:
                msg = f"{err.get('msg', 'invalid value')} (got {err.get('input')!r})"
            problems.append(f"'{loc}' {msg}" if loc else msg)
        return cls(action, first_param, "; ".join(problems))


class CompositionError(TypeError):
    """Two actions that cannot be composed (raised when composing, never when running)."""


class NoParameters(BaseModel):
    """The shared parameter model of every action that takes no public parameters."""

    model_config = _STRICT_CONFIG


def make_parameters_model(name: str, fields: Mapping[str, tuple[Any, FieldInfo]]) -> type[BaseModel]:
    """Build the strict (no extra keys) pydantic model that holds an action's parameters.

    Parameterless actions share one model: evaluators are often built per episode, and
    creating a pydantic model costs about half a millisecond.
    """
    if not fields:
        return NoParameters
    model_name = "".join(part.capitalize() for part in name.replace("-", "_").split("_")) or "Params"
    return create_model(model_name + "Parameters", __config__=_STRICT_CONFIG, **dict(fields))


class Action:
    """A named, typed, validated operation.

    Args:
        name: the tool name agents call.
        entry: the callable that does the work; receives validated parameters and the kept
            parameters it declares.
        parameters: pydantic model of the public parameters (``None``: no parameters).
        description: what the action does, shown to agents.
        returns: the return annotation, used to type-check ``>>`` compositions.
        kept_params: names of injected parameters the entry accepts (e.g. ``("env",)``).
        env_name: the environment this action belongs to, if any.
    """

    def __init__(
        self,
        name: str,
        entry: Callable[..., Any],
        parameters: type[BaseModel] | None = None,
        *,
        description: str = "",
        returns: Any = Any,
        kept_params: tuple[str, ...] | list[str] = (),
        required_kept: tuple[str, ...] | list[str] = (),
        env_name: str | None = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ValueError("an action needs a non-empty string name")
        self.name = name
        self.entry = entry
        self.parameters = parameters if parameters is not None else make_parameters_model(name, {})
        self.description = description or name
        self.returns = returns
        self.kept_params = tuple(kept_params)
        self.required_kept = tuple(required_kept)
        self.env_name = env_name
        self._kept_names = frozenset(self.kept_params) | DEFAULT_KEPT_PARAMS
        self._adapters: dict[str, TypeAdapter] = {}

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        env_name: str | None = None,
        kept_params: tuple[str, ...] | list[str] | None = None,
        **extra: Any,
    ) -> Action:
        """Build an action from a function's signature, type hints and docstring."""
        action_name = name or func.__name__
        kept = set(kept_params or ()) | DEFAULT_KEPT_PARAMS
        try:
            hints = typing.get_type_hints(func, include_extras=True)
        except Exception as exc:  # unresolved forward references
            raise CompositionError(f"action '{action_name}': cannot resolve type hints: {exc}") from exc
        doc = parse_docstring(func.__doc__)
        fields: dict[str, tuple[Any, FieldInfo]] = {}
        declared_kept: list[str] = []
        required_kept: list[str] = []
        for pname, param in inspect.signature(func).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"action '{action_name}': *args/**kwargs ('{pname}') cannot be typed")
            if pname in kept:
                declared_kept.append(pname)
                if param.default is param.empty:
                    required_kept.append(pname)
                continue
            if pname not in hints:
                raise TypeError(f"action '{action_name}': parameter '{pname}' has no type hint")
            default = ... if param.default is param.empty else param.default
            info = Field(default, description=doc.params.get(pname) or None)
            fields[pname] = (hints[pname], info)
        return cls(
            action_name,
            func,
            make_parameters_model(action_name, fields),
            description=description or doc.summary or action_name,
            returns=hints.get("return", Any),
            kept_params=declared_kept,
            required_kept=required_kept,
            env_name=env_name,
            **extra,
        )

    # ------------------------------------------------------------------ introspection
    @property
    def param_names(self) -> list[str]:
        """Public parameter names, in schema order."""
        return list(self.parameters.model_fields)

    @property
    def required_params(self) -> list[str]:
        """Public parameters without a default."""
        return [n for n, f in self.parameters.model_fields.items() if f.is_required()]

    @property
    def is_closed(self) -> bool:
        """True when the action can run with no public arguments."""
        return not self.required_params

    def field_adapter(self, param: str) -> TypeAdapter:
        """A cached validator for one parameter (used to validate piped values)."""
        if param not in self._adapters:
            field = self.parameters.model_fields[param]
            annotated = typing.Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
            self._adapters[param] = TypeAdapter(annotated)
        return self._adapters[param]

    # ------------------------------------------------------------------ running
    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate public arguments; return the validated python values (defaults filled)."""
        if not isinstance(arguments, Mapping):
            raise ActionArgumentError(
                self.name, None, f"arguments must be an object, got {type(arguments).__name__}"
            )
        fields = self.parameters.model_fields
        if not fields and not arguments:
            return {}
        try:
            model = self.parameters.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ActionArgumentError.from_validation(self.name, exc) from None
        return {pname: getattr(model, pname) for pname in fields}

    def to_json_arguments(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Validated values -> the JSON-compatible arguments an agent would send."""
        return self.parameters.model_validate(dict(values)).model_dump(mode="json")

    def __call__(self, **kwargs: Any) -> Any:
        """Validate the public arguments, then run with the kept ones."""
        kept = {k: kwargs.pop(k) for k in list(kwargs) if k in self._kept_names}
        return self.run_validated(self.validate(kwargs), **kept)

    def run_validated(self, values: Mapping[str, Any], **kept: Any) -> Any:
        """Run with values already returned by :meth:`validate` (the env's fast path)."""
        missing = [k for k in self.required_kept if k not in kept]
        if missing:
            raise ActionArgumentError(
                self.name,
                missing[0],
                "this kept parameter is injected at run time (normally by an Environment) "
                "and was not given",
            )
        return self._invoke(dict(values), kept)

    def _invoke(self, values: dict[str, Any], kept: Mapping[str, Any]) -> Any:
        own = {k: v for k, v in kept.items() if k in self.kept_params}
        return self.entry(**values, **own)

    # ------------------------------------------------------------------ schema
    def to_schema(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}`` with an inlined, strict JSON schema."""
        raw = self.parameters.model_json_schema()
        params = clean_schema(raw)
        return {
            "name": self.name,
            "description": self.description,
            "parameters": {
                "type": "object",
                "properties": params.get("properties", {}),
                "required": list(params.get("required", [])),
                "additionalProperties": False,
            },
        }

    def to_tool(self, fmt: Literal["openai", "anthropic"] = "openai") -> dict[str, Any]:
        """The tool definition in OpenAI's or Anthropic's wire shape."""
        schema = self.to_schema()
        if fmt == "openai":
            return {"type": "function", "function": schema}
        if fmt == "anthropic":
            return {
                "name": schema["name"],
                "description": schema["description"],
                "input_schema": schema["parameters"],
            }
        raise ValueError(f"unknown tool format {fmt!r}; use 'openai' or 'anthropic'")

    # ------------------------------------------------------------------ composition
    def bind(self, **arguments: Any) -> Action:
        """A new action with some parameters fixed; the rest stay public."""
        fields = self.parameters.model_fields
        unknown = [k for k in arguments if k not in fields]
        if unknown:
            raise ActionArgumentError(self.name, unknown[0], "is not a parameter of this action")
        bound: dict[str, Any] = {}
        for key, value in arguments.items():
            try:
                bound[key] = self.field_adapter(key).validate_python(value)
            except ValidationError as exc:
                raise ActionArgumentError(self.name, key, str(exc.errors()[0]["msg"])) from None
        remaining = {k: (f.annotation, f) for k, f in fields.items() if k not in bound}
        return self._make_bound(bound, make_parameters_model(self.name, remaining))

    def _make_bound(self, bound: dict[str, Any], model: type[BaseModel]) -> Action:
        """The class-appropriate bound copy (evaluators stay evaluators)."""
        return _Bound(self, bound, model)

    def __rshift__(self, other: Action) -> Action:
        """``a >> b``: feed a's return value into b's single remaining required parameter."""
        if not isinstance(other, Action):
            return NotImplemented
        remaining = other.required_params
        if len(remaining) != 1:
            raise CompositionError(
                f"cannot pipe '{self.name}' >> '{other.name}': '{other.name}' must have exactly one "
                f"remaining required parameter to receive the value, it has {remaining}"
            )
        target = remaining[0]
        expected = other.parameters.model_fields[target].annotation
        if not types_compatible(self.returns, expected):
            raise CompositionError(
                f"cannot pipe '{self.name}' >> '{other.name}': '{self.name}' returns "
                f"{_type_name(self.returns)} but parameter '{target}' expects {_type_name(expected)}"
            )
        other_fields = {k: f for k, f in other.parameters.model_fields.items() if k != target}
        fields = _merge_fields(self, self.parameters.model_fields, other, other_fields, strict=True)
        return _Pipe(self, other, target, fields)

    def __add__(self, other: Action) -> Action:
        """``a + b``: run a then b with the union of their parameters; return b's result."""
        if not isinstance(other, Action):
            return NotImplemented
        fields = _merge_fields(
            self, self.parameters.model_fields, other, other.parameters.model_fields, strict=True
        )
        return _Sequence(self, other, fields)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, params={self.param_names})"


class _Composite(Action):
    """An action made of others: its entry calls the children's ``_invoke``."""

    def __init__(self, name: str, children: tuple[Action, ...], fields: dict, **kwargs: Any) -> None:
        kept = tuple(dict.fromkeys(k for child in children for k in child.kept_params))
        required = tuple(dict.fromkeys(k for child in children for k in child.required_kept))
        super().__init__(
            name,
            self._run,
            make_parameters_model(name, fields),
            kept_params=kept,
            required_kept=required,
            env_name=children[0].env_name,
            **kwargs,
        )
        self.children = children

    def _invoke(self, values: dict[str, Any], kept: Mapping[str, Any]) -> Any:
        return self._run(values, kept)

    def _run(self, values: dict[str, Any], kept: Mapping[str, Any]) -> Any:  # pragma: no cover
        raise NotImplementedError

    @staticmethod
    def _subset(action: Action, values: Mapping[str, Any]) -> dict[str, Any]:
        return {k: values[k] for k in action.parameters.model_fields if k in values}


class _Bound(_Composite):
    def __init__(self, base: Action, bound: dict[str, Any], model: type[BaseModel]) -> None:
        fields = {k: (f.annotation, f) for k, f in model.model_fields.items()}
        super().__init__(
            base.name, (base,), fields, description=base.description, returns=base.returns
        )
        self.bound_arguments = bound

    def _run(self, values: dict[str, Any], kept: Mapping[str, Any]) -> Any:
        return self.children[0]._invoke({**self.bound_arguments, **values}, kept)


class _Pipe(_Composite):
    def __init__(self, first: Action, second: Action, target: str, fields: dict) -> None:
        super().__init__(
            f"{first.name}_then_{second.name}",
            (first, second),
            fields,
            description=f"{first.description} Then: {second.description}",
            returns=second.returns,
        )
        self.target = target

    def _run(self, values: dict[str, Any], kept: Mapping[str, Any]) -> Any:
        first, second = self.children
        produced = first._invoke(self._subset(first, values), kept)
        try:
            piped = second.field_adapter(self.target).validate_python(produced)
        except ValidationError as exc:
            raise ActionArgumentError(
                second.name, self.target, f"value piped from '{first.name}' is invalid: {exc.errors()[0]['msg']}"
            ) from None
        return second._invoke({**self._subset(second, values), self.target: piped}, kept)


class _Sequence(_Composite):
    def __init__(self, first: Action, second: Action, fields: dict) -> None:
        super().__init__(
            f"{first.name}_and_{second.name}",
            (first, second),
            fields,
            description=f"{first.description} Then: {second.description}",
            returns=second.returns,
        )

    def _run(self, values: dict[str, Any], kept: Mapping[str, Any]) -> Any:
        first, second = self.children
        first._invoke(self._subset(first, values), kept)
        return second._invoke(self._subset(second, values), kept)


def _merge_fields(
    left: Action,
    left_fields: Mapping[str, FieldInfo],
    right: Action,
    right_fields: Mapping[str, FieldInfo],
    *,
    strict: bool,
) -> dict[str, tuple[Any, FieldInfo]]:
    """Union of two parameter sets. ``strict``: any shared name is a clash; otherwise a
    shared name must have the same type and is merged (evaluator combinators)."""
    merged: dict[str, tuple[Any, FieldInfo]] = {k: (f.annotation, f) for k, f in left_fields.items()}
    for key, field in right_fields.items():
        if key in merged:
            same_type = merged[key][0] == field.annotation and merged[key][1].metadata == field.metadata
            if strict or not same_type:
                raise CompositionError(
                    f"cannot compose '{left.name}' and '{right.name}': both have a parameter "
                    f"'{key}'" + ("" if strict else " with different types")
                )
            continue
        merged[key] = (field.annotation, field)
    return merged


def _strip_annotated(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def types_compatible(produced: Any, expected: Any) -> bool:
    """Whether a value of type ``produced`` can always be passed where ``expected`` is wanted."""
    produced, expected = _strip_annotated(produced), _strip_annotated(expected)
    if produced is Any or expected is Any or produced is inspect.Parameter.empty:
        return True
    if produced is None:
        produced = type(None)
    if expected is None:
        expected = type(None)
    if produced == expected:
        return True
    union_types = (Union, types.UnionType)
    if typing.get_origin(produced) in union_types:
        return all(types_compatible(arg, expected) for arg in typing.get_args(produced))
    if typing.get_origin(expected) in union_types:
        return any(types_compatible(produced, arg) for arg in typing.get_args(expected))
    if typing.get_origin(expected) is Literal:
        return typing.get_origin(produced) is Literal and set(typing.get_args(produced)) <= set(
            typing.get_args(expected)
        )
    if typing.get_origin(produced) is Literal:
        return all(isinstance(v, expected) for v in typing.get_args(produced) if isinstance(expected, type))
    if expected is float and produced is int:
        return True
    origin_p = typing.get_origin(produced) or produced
    origin_e = typing.get_origin(expected) or expected
    if isinstance(origin_p, type) and isinstance(origin_e, type) and issubclass(origin_p, origin_e):
        args_p, args_e = typing.get_args(produced), typing.get_args(expected)
        if not args_e or not args_p:
            return True
        if len(args_p) != len(args_e):
            return False
        return all(types_compatible(p, e) for p, e in zip(args_p, args_e))
    return False


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def action(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    env_name: str | None = None,
    kept_params: tuple[str, ...] | list[str] | None = None,
) -> Any:
    """Decorator: turn a typed, documented function into an :class:`Action`.

    Usable bare (``@action``) or with options (``@action(name="move", env_name="desktop")``).
    Parameters named ``env`` (or listed in ``kept_params``) are injected at run time.
    """

    def build(f: Callable[..., Any]) -> Action:
        return Action.from_function(
            f, name=name, description=description, env_name=env_name, kept_params=kept_params
        )

    return build(func) if func is not None else build
