"""Evaluators: actions that return a bool, combinable with ``&``, ``|`` and ``~``.

Unlike CRAB's own combinators, ours keep both the operands' public parameters (merged by
name) and their kept parameters (``env``), so a combined evaluator can still see the env.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from crab_gym.core.action import Action, _Bound, _Composite, _merge_fields


class Evaluator(Action):
    """An :class:`Action` whose result is a bool.

    ``require_submit``: the check is only meaningful once the agent has declared it is done
    (e.g. an answer comparison), so graph evaluation may skip it until then.
    """

    def __init__(self, *args: Any, require_submit: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.require_submit = require_submit

    def _invoke(self, values: dict[str, Any], kept: Mapping[str, Any]) -> bool:
        return bool(super()._invoke(values, kept))

    def __and__(self, other: Evaluator) -> Evaluator:
        return _combine("and", self, other)

    def __or__(self, other: Evaluator) -> Evaluator:
        return _combine("or", self, other)

    def __invert__(self) -> Evaluator:
        return _Not(self)

    def _make_bound(self, bound: dict[str, Any], model: type[BaseModel]) -> Evaluator:
        return _BoundEvaluator(self, bound, model)


class _BoundEvaluator(_Bound, Evaluator):
    """An evaluator with some parameters fixed (e.g. ready for a graph)."""

    def __init__(self, base: Evaluator, bound: dict[str, Any], model: type[BaseModel]) -> None:
        _Bound.__init__(self, base, bound, model)
        self.require_submit = base.require_submit

    def _invoke(self, values: dict[str, Any], kept: Mapping[str, Any]) -> bool:
        return bool(self._run(values, kept))


class _CompositeEvaluator(_Composite, Evaluator):
    """An evaluator whose value is computed from child evaluators."""

    def __init__(self, name: str, children: tuple[Action, ...], fields: dict, **kwargs: Any) -> None:
        _Composite.__init__(self, name, children, fields, returns=bool, **kwargs)
        self.require_submit = any(getattr(c, "require_submit", False) for c in children)

    def _invoke(self, values: dict[str, Any], kept: Mapping[str, Any]) -> bool:
        return bool(self._run(values, kept))


class _BinaryEvaluator(_CompositeEvaluator):
    def __init__(self, op: str, left: Evaluator, right: Evaluator) -> None:
        fields = _merge_fields(
            left, left.parameters.model_fields, right, right.parameters.model_fields, strict=False
        )
        super().__init__(
            f"({left.name} {op} {right.name})",
            (left, right),
            fields,
            description=f"({left.description}) {op} ({right.description})",
        )
        self.op = op

    def _run(self, values: dict[str, Any], kept: Mapping[str, Any]) -> bool:
        left, right = self.children
        first = bool(left._invoke(self._subset(left, values), kept))
        if self.op == "and" and not first:
            return False
        if self.op == "or" and first:
            return True
        return bool(right._invoke(self._subset(right, values), kept))


class _Not(_CompositeEvaluator):
    def __init__(self, inner: Evaluator) -> None:
        fields = {k: (f.annotation, f) for k, f in inner.parameters.model_fields.items()}
        super().__init__(f"not {inner.name}", (inner,), fields, description=f"not ({inner.description})")

    def _run(self, values: dict[str, Any], kept: Mapping[str, Any]) -> bool:
        return not self.children[0]._invoke(values, kept)


def _combine(op: str, left: Any, right: Any) -> Evaluator:
    if not isinstance(left, Evaluator) or not isinstance(right, Evaluator):
        raise TypeError(f"'{op}' combines two evaluators, got {type(left).__name__} and {type(right).__name__}")
    return _BinaryEvaluator(op, left, right)


def evaluator(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    env_name: str | None = None,
    require_submit: bool = False,
    kept_params: tuple[str, ...] | list[str] | None = None,
) -> Any:
    """Decorator: turn a predicate into an :class:`Evaluator` (bare or with options)."""

    def build(f: Callable[..., Any]) -> Evaluator:
        ev = Evaluator.from_function(
            f,
            name=name,
            description=description,
            env_name=env_name,
            kept_params=kept_params,
            require_submit=require_submit,
        )
        if ev.returns not in (bool, Any):
            raise TypeError(f"evaluator '{ev.name}' must return bool, it is annotated {ev.returns!r}")
        return ev

    return build(func) if func is not None else build
