"""Obfuscated REALM envs: the same problem with its names replaced, against memorisation.

A model that saw REALM-Bench's files (or their solutions) while training can recognise an
instance by its names -- ``ft06``, ``p3_small_01``, the campus's ``clock_tower`` -- and recall
rather than plan. :class:`ObfuscatedNames`, a Gymnasium wrapper, shows an LLM the same problem
under other names: the instance, places, people, vehicles, dishes, components, suppliers,
regions, groups and guides get pseudo-words drawn from a seed, consistently everywhere the model
looks (the task text, ``describe()``, the action schemas' enums, field names and descriptions,
errors, the solution, the reference plan). Nothing else changes: the numbers, the order of every
list and of the flat actions (so ``action_masks()`` and the action space are the inner env's),
the checker, the reference value. A plan therefore scores the same under renaming.

Use: ``gym.make(id, obfuscate=3)`` (``True``: seed 0), or by hand on any REALM env,
``ObfuscatedNames(gym.make(id), seed=3)`` (the same names, the same episode).

How: one mechanism for every family. Each problem declares in its ``ProblemSpec`` which instance
fields hold names (``name_fields``: ``locations[]``, ``vehicles[].vehicle_id``...); the names are
read from the instance through them, and text is rewritten token by token (a name is replaced
only where it stands as a whole identifier, so ``p1`` in ``pickup:p1`` is renamed and ``p10`` is
not touched), and each call coming in is rewritten back before the inner env runs it. What is
kept on purpose (``ProblemSpec.kept_names``, which the tests read): words that name a kind, not
an entity -- P7's resources and severities, P10's production stages (assembly, testing,
packaging), vehicle types -- and a name that is also a tool's or an argument's name (P4's place
``park`` beside the ``park`` tool). P11's jobs and machines are numbers, not names: they are
renumbered by seeded permutations (``ProblemSpec.numbering``, :mod:`.index_permutation`), in the
text, the observation, the mask, the calls and the plans.

Limits: ``rgb_array`` renders are the inner env's pictures (names drawn in them); the inner
env's ``instance`` object (read by heuristics through ``__getattr__``) keeps its names; a
policy that acts with original names still works (a name that is no alias passes unchanged).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import operator
import re
import types
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin  # noqa: UP035 - Union: get_origin's value

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec
from pydantic import BaseModel, create_model

from crab_gym.core.action import Action
from crab_gym.core.spaces import ActionCodec
from crab_gym.envs.realm.common.index_permutation import Renumbering
from crab_gym.envs.realm.common.known_problems import problem_of
from crab_gym.envs.realm.common.problem_spec import ProblemSpec

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_CONSONANTS, _VOWELS = "bdfgklmnprstvz", "aeiou"


# ====================================================================== names
def instance_names(instance: Any, fields: Sequence[str]) -> list[str]:
    """The names ``fields`` point at in ``instance``, in order, without repeats (identifiers only)."""
    found: list[str] = []
    for path in fields:
        found.extend(v for v in _walk(instance, path.replace("[]", ".[]").replace("{}", ".{}").split(".")) if v)
    return [n for n in dict.fromkeys(found) if isinstance(n, str) and _IDENT.match(n)]


def _walk(obj: Any, parts: list[str]) -> Iterable[Any]:
    if not parts:
        yield obj
        return
    head, rest = parts[0], parts[1:]
    if head == "[]":
        for item in obj or ():
            yield from _walk(item, rest)
    elif head == "{}":
        for key in (obj or {}):
            yield from _walk(key, rest)
    elif head:
        value = obj.get(head) if isinstance(obj, Mapping) else getattr(obj, head, None)
        if value is not None:
            yield from _walk(value, rest)
    else:
        yield from _walk(obj, rest)


def _pseudo_word(rng: np.random.Generator) -> str:
    syllables = int(rng.integers(2, 4))
    word = "".join(_CONSONANTS[rng.integers(len(_CONSONANTS))] + _VOWELS[rng.integers(len(_VOWELS))]
                   for _ in range(syllables))
    return word.capitalize()


def _token_pattern(words: Iterable[str], *, in_ids: bool = False) -> re.Pattern[str] | None:
    """Whole identifiers among ``words`` (longest first); ``in_ids``: also the parts of an
    identifier between underscores (``home`` and ``sister`` in the sub-goal ``home_sister``)."""
    words = sorted(set(words), key=len, reverse=True)
    if not words:
        return None
    edge = "A-Za-z0-9" if in_ids else "A-Za-z0-9_"
    return re.compile(rf"(?<![{edge}])(?:" + "|".join(map(re.escape, words)) + rf")(?![{edge}])")


class NameMap:
    """A bijection between names and pseudo-word aliases, applied token by token.

    Args:
        names: the names to hide (the first may be the instance's name).
        seed: draws the aliases (the same seed and names give the same aliases).
        avoid: words no alias may be (the text's own words, compared case-blind).
        instance_name: the instance's name, aliased ``instance_<word>``.
    """

    def __init__(self, names: Sequence[str], seed: int, avoid: Iterable[str] = (), instance_name: str | None = None):
        rng = np.random.default_rng([int(seed), zlib.crc32("\n".join(names).encode())])
        taken = {w.lower() for w in avoid} | {n.lower() for n in names}
        self.forward: dict[str, str] = {}
        for name in ([instance_name] if instance_name else []) + [n for n in names if n != instance_name]:
            alias = _pseudo_word(rng)
            while alias.lower() in taken:
                alias = _pseudo_word(rng)
            taken.add(alias.lower())
            self.forward[name] = f"instance_{alias.lower()}" if name == instance_name else alias
        self.backward = {alias: name for name, alias in self.forward.items()}
        self._out = _token_pattern(self.forward)
        self._in = _token_pattern(self.backward)
        self._in_ids = _token_pattern(self.forward, in_ids=True)

    def text(self, text: str) -> str:
        """``text`` with every name replaced by its alias."""
        return self._out.sub(lambda m: self.forward[m.group(0)], text) if self._out is not None else text

    def ids(self, text: str) -> str:
        """An identifier made of names (a sub-goal: ``at_venue_robin``) with each name replaced."""
        return self._in_ids.sub(lambda m: self.forward[m.group(0)], text) if self._in_ids is not None else text

    def untext(self, text: str) -> str:
        """``text`` with every alias replaced by its name (other words unchanged)."""
        return self._in.sub(lambda m: self.backward[m.group(0)], text) if self._in is not None else text

    def out(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings) with names replaced in strings and keys."""
        return _map_strings(value, self.text)

    def back(self, value: Any) -> Any:
        """``value`` with aliases replaced by names: what the inner env understands."""
        return _map_strings(value, self.untext)


def _map_strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        return {change(k) if isinstance(k, str) else k: _map_strings(v, change) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_strings(v, change) for v in value) if isinstance(value, list) else \
            tuple(_map_strings(v, change) for v in value)
    return value


# ====================================================================== renamed actions
def _never_run(**_: Any) -> None:
    raise RuntimeError("an obfuscated env's action is never run itself: the inner env runs the call")


class _Retyper:
    """Rebuilds annotations and pydantic models with every string literal, field name and
    description renamed (structure, order and bounds unchanged)."""

    def __init__(self, names: NameMap) -> None:
        self.names = names
        self._models: dict[type[BaseModel], type[BaseModel]] = {}

    def type(self, tp: Any) -> Any:
        origin, args = get_origin(tp), get_args(tp)
        if origin is Literal:
            return Literal[tuple(self.names.text(a) if isinstance(a, str) else a for a in args)]  # type: ignore[misc]
        if origin is Annotated:
            return Annotated[(self.type(args[0]), *tp.__metadata__)]  # type: ignore[misc]
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return self.model(tp)
        if not args:
            return tp
        new = tuple(self.type(a) for a in args)
        if origin is Union or isinstance(tp, types.UnionType):
            return functools.reduce(operator.or_, new)
        if isinstance(tp, types.GenericAlias):
            return types.GenericAlias(origin, new)
        return tp.copy_with(new) if hasattr(tp, "copy_with") else tp

    def model(self, model: type[BaseModel]) -> type[BaseModel]:
        if model not in self._models:
            fields: dict[str, Any] = {}
            for name, info in model.model_fields.items():
                renamed = copy.copy(info)
                if info.description:
                    renamed.description = self.names.text(info.description)
                fields[self.names.text(name)] = (self.type(info.annotation), renamed)
            self._models[model] = create_model(model.__name__, __config__=model.model_config, **fields)
        return self._models[model]

    def action(self, act: Action) -> Action:
        params = None if act.parameters is None else self.model(act.parameters)
        return Action(act.name, _never_run, params, description=self.names.text(act.description))


def reserved_words(codec: ActionCodec, names: Iterable[str] = ()) -> set[str]:
    """Tool and argument names, never renamed: a place named ``park`` beside a ``park`` tool
    stays ``park`` (else the text would rename the tool where it mentions it). Fields named
    after entities (P3's plan has a field per vehicle: ``v1``) are no argument names."""
    entities = set(names)
    words: set[str] = set()
    for act in codec.actions:
        words.add(act.name)
        if act.parameters is not None:
            words |= set(act.parameters.model_fields)
            words |= _nested_field_names(act.parameters) - entities
    return words


def _nested_field_names(model: type[BaseModel]) -> set[str]:
    names: set[str] = set()
    for info in model.model_fields.values():
        for inner in _models_in(info.annotation):
            names |= set(inner.model_fields) | _nested_field_names(inner)
    return names


def _models_in(tp: Any) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for a in get_args(tp) for m in _models_in(a)]


def renamed_codec(codec: ActionCodec, names: NameMap) -> ActionCodec:
    """``codec`` with every name renamed: the same actions, in the same flat order."""
    retyper = _Retyper(names)
    return ActionCodec([retyper.action(a) for a in codec.actions])


# ====================================================================== what each problem declares
def declared_name_fields(env: gym.Env, problem: ProblemSpec | None) -> tuple[str, ...]:
    """The name fields ``problem`` declares, else a ValueError that says what to fill in."""
    if problem is None:
        raise ValueError(f"{type(env.unwrapped).__name__} is no problem of the REALM index, so no ProblemSpec "
                         "declares its name_fields: pass name_fields=[...] (the instance fields holding names), "
                         "or add its family (crab_gym.envs.registration.add_family)")
    if problem.name_fields is None:
        raise ValueError(f"{problem.env_id}'s ProblemSpec declares no name_fields, so renaming does not know which "
                         "names to hide: set ProblemSpec(name_fields=(...)) in its spec.py, the instance fields "
                         "that hold names, e.g. ('locations[]', 'vehicles[].vehicle_id') (() if the instance's own "
                         "name is its only one), or pass name_fields=[...] here")
    return problem.name_fields


# ====================================================================== the wrapper
class ObfuscatedNames(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A REALM env under other names (see the module docstring), as a Gymnasium wrapper:
    ``ObfuscatedNames(gym.make(id), seed=3)``, or ``gym.make(id, obfuscate=3)`` (the same).

    The renamed env is what an agent meets -- its task text, ``describe()``, tools, mask,
    reference plan -- and the suite reads that from ``env.unwrapped`` (the LLM adapter, the MCP
    server, the policies, the episode runner). So this wrapper is its own :attr:`unwrapped`,
    and the plain env, names and all, stays underneath: :attr:`env` (as wrapped) and
    :attr:`inner` (its base).

    Args:
        env: a REALM env (made by ``gym.make`` or built directly).
        seed: draws the aliases; the same seed and instance give the same names.
        name_fields: the instance fields holding names (default: ``name_fields`` of the env's
            ProblemSpec, which a problem declares in its ``spec.py``).
    """

    def __init__(self, env: gym.Env, *, seed: int = 0, name_fields: Sequence[str] | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, seed=seed, name_fields=name_fields)
        gym.Wrapper.__init__(self, env)
        problem = problem_of(env)
        self.name_fields = tuple(declared_name_fields(env, problem) if name_fields is None else name_fields)
        self._numbering = problem.numbering if problem is not None else None
        self.renumbering: Renumbering | None = None
        self._flat_inner: np.ndarray | None = None
        self.obfuscation_seed = int(seed)
        self._instance_key: Any = None
        self.names: NameMap
        self.codec: ActionCodec
        self._rebuild()

    @property
    def unwrapped(self) -> ObfuscatedNames:
        """This wrapper: code that reads ``env.unwrapped`` meets the renamed env, never the names."""
        return self

    @property
    def inner(self) -> Any:
        """The plain env underneath (the wrapped env's base), under its own names."""
        return self.env.unwrapped

    @property
    def spec(self) -> EnvSpec | None:
        """The wrapped env's spec with this wrapper added (as every Gymnasium wrapper's)."""
        return gym.Wrapper.spec.fget(self)  # type: ignore[attr-defined]

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        """``gym.make`` sets the spec of ``env.unwrapped`` (this wrapper): it is the plain env's."""
        self.inner.spec = value
        self._cached_spec = None

    # ------------------------------------------------------------------ names
    def _rebuild(self) -> None:
        """Draw the aliases of the current instance (at construction and when it changes)."""
        base = self.inner
        instance = base.instance
        key = (id(instance), getattr(instance, "name", None))
        if key == self._instance_key:
            return
        instance_name = getattr(instance, "name", None)
        names = instance_names(instance, self.name_fields)
        described = base.describe() if hasattr(base, "describe") else ""
        words = set(re.findall(r"[A-Za-z][A-Za-z0-9_]*", f"{_task_text(base)}\n{described}\n{base.codec.actions}"))
        names = [n for n in names if n not in reserved_words(base.codec, names)]
        if isinstance(instance_name, str) and instance_name:
            names = [instance_name, *names]
        self.names = NameMap(names, self.obfuscation_seed, words, instance_name=instance_name or None)
        self.codec = renamed_codec(base.codec, self.names)
        self._instance_key = key
        if self._numbering is not None:
            rng = np.random.default_rng([self.obfuscation_seed, zlib.crc32(str(instance_name).encode()), 1])
            self.renumbering = Renumbering(self._numbering, instance, rng)
            self._flat_inner = np.array([base.codec.call_to_flat(self._back(self.codec.flat_to_call(f)))
                                         for f in range(self.codec.n_flat)], dtype=np.int64)

    # ------------------------------------------------------------------ both ways
    def _text(self, text: str) -> str:
        """Text as shown: names replaced, numbered entities renumbered."""
        text = self.names.text(text)
        return self.renumbering.text(text) if self.renumbering is not None else text

    def _shown(self, value: Any) -> Any:
        return _map_strings(value, self._text)

    def _back(self, call: Mapping[str, Any]) -> dict[str, Any]:
        """A call as shown -> the call the inner env runs. Arguments may come as a JSON string (as
        tool-calling APIs send them); arguments that are no object are passed on as they are, so
        that the inner env refuses them with its own reason, as the plain env does."""
        arguments = call.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                return dict(call)
        if arguments is not None and not isinstance(arguments, Mapping):
            return dict(call)
        call = {**call, "arguments": self.names.back(dict(arguments or {}))}
        return self.renumbering.call(call, back=True) if self.renumbering is not None else call

    def shown_call(self, call: Mapping[str, Any]) -> dict[str, Any]:
        """A call of the inner env as this env shows it (names replaced, numbers renumbered)."""
        call = self.names.out(dict(call))
        return self.renumbering.call(call, back=False) if self.renumbering is not None else call

    def shown_plan(self, plan: Any) -> Any:
        plan = self.names.out(plan)
        return self.renumbering.plan(plan, back=False) if self.renumbering is not None else plan

    def _obs(self, obs: Any) -> Any:
        return self.renumbering.observation(obs) if self.renumbering is not None else obs

    def _goal(self, goal: str) -> str:
        """A sub-goal id (``visited_<place>``, ``at_venue_<guest>``, ``job_3_completed``) as shown."""
        goal = self.names.ids(goal)
        return self.renumbering.text(goal) if self.renumbering is not None else goal

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=self._back_options(options))
        self._rebuild()
        return self._obs(obs), self._info(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(self._inner_action(action))
        return self._obs(obs), reward, terminated, truncated, self._info(info)

    def _inner_action(self, action: Any) -> Any:
        """What the inner env runs: a call's names and numbers back to its own; an element of
        the action space means the same flat choice under the shown numbering."""
        if isinstance(action, str) and self.renumbering is not None:
            try:
                action = json.loads(action)
            except json.JSONDecodeError:
                return action  # no JSON: the inner env says why it is no call
        if isinstance(action, Mapping) and "name" in action:
            try:
                return self._back(action)
            except (TypeError, ValueError, KeyError, AttributeError):  # odd values: the inner env says why
                return action
        if isinstance(action, str):
            return self.names.untext(action)
        if self.renumbering is None:
            return action
        try:
            return self.renumbering.call(self.inner.codec.decode(action), back=True)
        except Exception:  # noqa: BLE001 - not an element of the space: the inner env rejects it
            return action

    def render(self) -> Any:
        frame = self.env.render()
        return self._text(frame) if isinstance(frame, str) else frame

    def _info(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """Every string of the info as shown; sub-goal ids, the call and the solution renamed too."""
        out = {k: self._shown(v) for k, v in info.items()}
        if isinstance(info.get("sub_goals_passed"), list):
            out["sub_goals_passed"] = [self._goal(g) if isinstance(g, str) else g for g in info["sub_goals_passed"]]
        if isinstance(info.get("action"), Mapping) and "name" in info["action"]:
            out["action"] = self._shown(self.shown_call(info["action"]))
        if isinstance(info.get("solution"), Mapping):
            out["solution"] = self._shown(self.shown_plan(info["solution"]))
        return out

    def _back_options(self, options: dict[str, Any] | None) -> dict[str, Any] | None:
        if not options or not isinstance(options.get("instance"), str):
            return options
        return {**options, "instance": self.names.untext(options["instance"])}

    # ------------------------------------------------------------------ what LLMs read
    @property
    def task_description(self) -> str:
        return self._text(_task_text(self.inner))

    def describe(self) -> str:
        return self._text(self.inner.describe())

    def tools(self, fmt: Literal["openai", "anthropic"] = "openai") -> list[dict[str, Any]]:
        return [a.to_tool(fmt) for a in self.codec.actions]

    def action_masks(self) -> np.ndarray:
        mask = self.inner.action_masks()
        return mask if self._flat_inner is None else np.asarray(mask)[self._flat_inner]

    # ------------------------------------------------------------------ scoring
    @property
    def reference(self) -> Any:
        return self._renamed_reference(self.inner.reference)

    def solved_reference(self) -> Any:
        return self._renamed_reference(self.inner.solved_reference())

    def _renamed_reference(self, ref: Any) -> Any:
        if dataclasses.is_dataclass(ref) and getattr(ref, "plan", None):
            return dataclasses.replace(ref, plan=self.shown_plan(ref.plan))
        return ref

    def finish_metrics(self) -> dict[str, Any]:
        return self._shown(self.inner.finish_metrics())

    def finish_adaptation(self) -> dict[str, Any]:
        return self._shown(self.inner.finish_adaptation())

    def deferred_reward(self) -> float:
        return self.inner.deferred_reward()

    def joint_pass_call(self) -> dict[str, Any] | None:
        call = self.inner.joint_pass_call()
        return None if call is None else self.shown_call(call)

    def __getattr__(self, name: str) -> Any:
        """Anything else (``completeness``, ``agent_arguments``, ``instance``...) is the plain env's."""
        if name.startswith("__") or name == "env":
            raise AttributeError(name)
        return getattr(self.env.unwrapped, name)


#: The name this wrapper had when it was an env of its own (kept for code that imports it).
ObfuscatedEnv = ObfuscatedNames


def _task_text(base: Any) -> str:
    text = getattr(base, "task_description", "")
    return str(text() if callable(text) else text)


def make_obfuscated(env_id: str, *, seed: int = 0, **kwargs: Any) -> ObfuscatedNames:
    """``gym.make(env_id, **kwargs)`` under other names (``seed`` draws them)."""
    return ObfuscatedNames(gym.make(env_id, **kwargs), seed=seed)


__all__ = ["NameMap", "ObfuscatedEnv", "ObfuscatedNames", "declared_name_fields", "instance_names", "make_obfuscated",
           "renamed_codec", "reserved_words"]
