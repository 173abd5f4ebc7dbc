"""The contract every crab_gym env keeps, as tests a user can run on their own env.

In the spirit of ``pettingzoo.test``: :func:`check_contract` plays thousands of mixed steps on
one env -- legal moves, masked moves, malformed tool calls and raw elements outside the action
space -- and checks what a user of the suite relies on:

* no exception escapes ``reset()`` or ``step()``;
* an invalid action leaves the observation and the env's state unchanged, says why in
  ``info["error"]``, and is never run as another action;
* ``info`` has the same keys on every call;
* rewards are finite, and with the default weights an episode's return lies in [0, 1];
* two runs with the same seeds and actions are identical (obs, rewards, flags, whole infos).

:func:`registered_env_ids` lists the ids the registry maps to crab_gym (or to a given package),
so that a test suite covers every env without a hand-written list::

    from crab_gym.checks.contract import check_contract, registered_env_ids
    for env_id in registered_env_ids():
        check_contract(env_id, steps=2000).raise_if_failed()

``python -m crab_gym.checks [ids...] --steps N`` runs it from the shell and prints one row
per env (the figures of a fuzz run); the scoring contract is :mod:`crab_gym.checks.scoring`'s.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from crab_gym.core.action import Action
from crab_gym.core.spaces import short_repr
from crab_gym.envs.registration import register_envs

#: Attributes of an env left out of its state snapshot: random generators, spaces, settings.
_SNAPSHOT_SKIP = frozenset(
    {"_np_random", "_np_random_seed", "np_random", "action_space", "observation_space", "spec",
     "metadata", "render_mode", "_cache", "_render_cache"}
)
#: ``repr`` cut for failure messages.
_short = functools.partial(short_repr, limit=120)
_OPAQUE_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                 type, np.random.Generator, np.random.RandomState)


class ContractError(AssertionError):
    """An env broke the contract; the message lists every failure found."""


@dataclass
class ContractReport:
    """What one :func:`check_contract` run did and found."""

    env_id: str
    steps: int = 0
    episodes: int = 0
    legal_steps: int = 0
    invalid_tried: int = 0
    out_of_space_tried: int = 0
    exceptions: int = 0
    failures: list[str] = field(default_factory=list)
    #: Declared scratch (``transient_attributes``) that invalid actions changed, with how often:
    #: allowed, and told apart from state, which an invalid action must leave unchanged.
    transient_changes: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures

    def fail(self, message: str) -> None:
        """Record a failure (only the first 20 are kept verbatim)."""
        if len(self.failures) < 20:
            self.failures.append(message)
        elif len(self.failures) == 20:
            self.failures.append("... more failures not shown")

    def notes(self) -> list[str]:
        """What the run allowed but a reader should know (declared scratch that changed)."""
        if not self.transient_changes:
            return []
        changed = ", ".join(f"{name} ({n}x)" for name, n in sorted(self.transient_changes.items()))
        return [f"{self.env_id}: invalid actions changed declared per-step scratch only: {changed}"]

    def raise_if_failed(self) -> None:
        if self.failures:
            raise ContractError(f"{self.env_id}: " + "\n  ".join(self.failures))

    def row(self) -> str:
        return (f"| {self.env_id} | {self.steps} | {self.episodes} | {self.legal_steps} | "
                f"{self.invalid_tried} | {self.out_of_space_tried} | {self.exceptions} | "
                f"{'ok' if self.ok else 'FAILED'} |")


# ---------------------------------------------------------------------------- registry
def registered_env_ids(package: str = "crab_gym") -> list[str]:
    """Ids in Gymnasium's registry whose entry point lives in ``package``."""
    register_envs()  # the suite's own ids are always there to list (idempotent)
    ids = []
    for env_id, spec in gym.registry.items():
        entry = spec.entry_point
        module = entry.split(":")[0] if isinstance(entry, str) else getattr(entry, "__module__", "")
        if module == package or module.startswith(package + "."):
            ids.append(env_id)
    return sorted(ids)


# ---------------------------------------------------------------------------- snapshots
def state_snapshot(env: gym.Env) -> Any:
    """A comparable deep snapshot of an env's state (its attributes, recursively).

    Random generators, spaces and functions are left out; objects are walked through their
    ``__dict__``/``__slots__``. Two snapshots compare equal iff nothing observable changed.
    """
    base = env.unwrapped
    skip = _SNAPSHOT_SKIP | set(getattr(base, "transient_attributes", ())) | set(getattr(base, "derived_attributes", ()))
    state = {k: v for k, v in vars(base).items() if k not in skip}
    token = _MEMO.set({})  # an object the state holds twice (the instance: env, sim, snapshot) is walked once
    try:  # a part the env holds (its yardstick) refers back to the env: not walked again
        return _freeze(state, 0, {id(base)})
    finally:
        _MEMO.reset(token)


def transient_snapshot(env: gym.Env) -> dict[str, Any]:
    """A comparable snapshot of the env's declared per-step scratch (``transient_attributes``)
    alone: what :func:`state_snapshot` leaves out."""
    base = env.unwrapped
    names = set(getattr(base, "transient_attributes", ())) - _SNAPSHOT_SKIP - set(getattr(base, "derived_attributes", ()))
    return {name: _freeze(getattr(base, name, None), 0, set()) for name in sorted(names)}


def _freeze(obj: Any, depth: int, seen: set[int]) -> Any:
    """A hashable, comparable image of ``obj``: leaves as values, containers walked."""
    if obj is None or isinstance(obj, (bool, int, str, bytes)):
        return obj
    if isinstance(obj, float):
        return "nan" if math.isnan(obj) else obj
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes() if obj.dtype != object else repr(obj))
    if isinstance(obj, np.generic):
        return _freeze(obj.item(), depth, seen)
    if isinstance(obj, _OPAQUE_TYPES) or callable(obj) and not hasattr(obj, "__dict__"):
        return f"<{type(obj).__name__}>"
    if isinstance(obj, Action):  # a tool's definition, fixed when the env is made: its name says which
        return ("action", type(obj).__name__, obj.name, repr(getattr(obj, "bound_arguments", None)))
    if depth > 12:
        return f"<deep {type(obj).__name__}>"
    if id(obj) in seen:
        return f"<cycle {type(obj).__name__}>"
    return _freeze_composite(obj, depth, seen | {id(obj)})


#: Within one :func:`state_snapshot`: object id -> its image (each object walked once; the
#: objects are alive for the whole call, so an id names one object).
_MEMO: contextvars.ContextVar[dict[int, Any] | None] = contextvars.ContextVar("contract_snapshot_memo", default=None)
#: Leaf types a container of which freezes to a tuple of its items at once (the fast path: a
#: simulation's history and an instance's matrices are long lists of numbers).
_PLAIN = frozenset({int, float, str, bool, type(None)})


def _plain_items(items: Any) -> tuple | None:
    """The items as a comparable tuple when every one is a plain value (NaN as ``"nan"``), else None."""
    values = tuple(items)
    if not all(type(v) in _PLAIN for v in values):
        return None
    return tuple("nan" if v != v else v for v in values)  # noqa: PLR0124 - NaN is the one value unequal to itself


def _freeze_composite(obj: Any, depth: int, seen: set[int]) -> Any:
    """``_freeze`` of a container or an object (``seen`` already holds ``obj``)."""
    if isinstance(obj, (list, tuple)) or type(obj).__name__ == "deque":
        plain = _plain_items(obj)
        if plain is not None:
            return (type(obj).__name__, plain)
    if isinstance(obj, Mapping):
        return ("map", tuple(sorted(((repr(k), _freeze(v, depth + 1, seen)) for k, v in obj.items()),
                                    key=lambda kv: kv[0])))
    if isinstance(obj, (set, frozenset)):
        return ("set", tuple(sorted(repr(_freeze(v, depth + 1, seen)) for v in obj)))
    if isinstance(obj, (list, tuple)) or type(obj).__name__ == "deque":
        return (type(obj).__name__, tuple(_freeze(v, depth + 1, seen) for v in obj))
    if isinstance(obj, spaces.Space):
        return f"<space {obj}>"
    memo = _MEMO.get()
    if memo is not None and id(obj) in memo:
        return memo[id(obj)]
    attrs = _object_attributes(obj)
    if not attrs:
        return f"<{type(obj).__name__}>"
    image = (type(obj).__name__, _freeze({k: v for k, v in attrs.items() if k not in _SNAPSHOT_SKIP},
                                         depth + 1, seen))
    if memo is not None:
        memo[id(obj)] = image
    return image


def _object_attributes(obj: Any) -> dict[str, Any]:
    """An object's state: its ``__dict__`` and the ``__slots__`` it has set, without the
    ``static_attributes`` its class declares (set when it is built, never changed after:
    walking an evaluator graph's topology at every refused step cost the P8 contract check 90 s)."""
    attrs: dict[str, Any] = {}
    if hasattr(obj, "__dict__"):
        attrs.update(vars(obj))
    for slot in getattr(type(obj), "__slots__", ()):
        if hasattr(obj, slot):
            attrs[slot] = getattr(obj, slot)
    for name in getattr(type(obj), "static_attributes", ()):
        attrs.pop(name, None)
    return attrs


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    """The path of the first place two frozen snapshots differ (for error messages)."""
    if type(a) is not type(b) or not isinstance(a, tuple) or len(a) != len(b):
        return path or "<root>"
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            label = _label(x) if _label(x) == _label(y) else ""  # a labelled pair on both sides
            step = f".{label}" if label and not label.startswith(("map", "list", "tuple")) else f"[{i}]"
            return _first_difference(x[1] if label else x, y[1] if label else y, path + step)
    return path or "<root>"


def _label(x: Any) -> str:
    """The label of a frozen ``(label, value)`` pair, else ``""``."""
    return x[0] if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) else ""


def same(a: Any, b: Any) -> bool:
    """Deep equality for observations and infos (numpy-aware, NaN equals NaN)."""
    return _freeze(a, 0, set()) == _freeze(b, 0, set())


# ---------------------------------------------------------------------------- action makers
class _ActionMaker:
    """Draws legal, masked, malformed and out-of-space actions for one env."""

    def __init__(self, env: gym.Env, rng: np.random.Generator) -> None:
        self.env = env
        self.base = env.unwrapped
        self.codec = getattr(self.base, "codec", None)
        self.rng = rng
        self.space = env.action_space
        self.space.seed(int(rng.integers(2**31)))
        self.names = [a.name for a in self.codec.actions] if self.codec is not None else []

    # -- legal and masked choices over the finite actions
    def mask(self) -> np.ndarray | None:
        fn = getattr(self.base, "action_masks", None)
        if fn is None or self.codec is None or self.codec.n_flat == 0:
            return None
        return np.asarray(fn(), dtype=bool)

    def _as_element_or_call(self, call: dict[str, Any]) -> Any:
        if self.rng.random() < 0.5:
            return copy.deepcopy(call)
        return self.codec.encode(call)

    def legal(self) -> Any | None:
        mask = self.mask()
        if mask is None or not mask.any():
            return None
        flat = int(self.rng.choice(np.flatnonzero(mask)))
        return self._as_element_or_call(self.codec.flat_to_call(flat))

    def masked(self) -> Any | None:
        mask = self.mask()
        if mask is None or mask.all():
            return None
        flat = int(self.rng.choice(np.flatnonzero(~mask)))
        return self._as_element_or_call(self.codec.flat_to_call(flat))

    def sampled(self) -> Any:
        return self.space.sample()

    # -- malformed tool calls
    def malformed_call(self) -> Any:
        name = self.names[int(self.rng.integers(len(self.names)))] if self.names else "noop"
        params: list[str] = []
        if self.codec is not None:
            params = list(self.codec.action(name).to_schema()["parameters"]["properties"])
        bad_values = [None, -1, 2**64, float("inf"), float("nan"), 1.5, "", "?" * 5000, [], {}, [[1]]]
        options: list[Callable[[], Any]] = [
            lambda: {"name": "no_such_action_" + str(self.rng.integers(100)), "arguments": {}},
            lambda: {"name": name, "arguments": "{not json"},
            lambda: {"name": name, "arguments": [1, 2]},
            lambda: {"name": name, "arguments": {"no_such_parameter": 1}},
            lambda: {"name": None, "arguments": {}},
            lambda: {"name": name, "arguments": 7},
        ]
        if params:
            def wrong_value() -> dict[str, Any]:
                call = self._any_call(name)
                call["arguments"][params[int(self.rng.integers(len(params)))]] = bad_values[
                    int(self.rng.integers(len(bad_values)))]
                return call

            def missing_value() -> dict[str, Any]:
                call = self._any_call(name)
                call["arguments"].pop(params[int(self.rng.integers(len(params)))], None)
                return call

            options += [wrong_value, wrong_value, wrong_value, missing_value]
        call = options[int(self.rng.integers(len(options)))]()
        if self.codec is not None and isinstance(call.get("name"), str) and call["name"] in self.codec.index:
            try:  # a "bad" value can be legal for some parameter (e.g. -1 in -10..10): redraw
                self.codec.action(call["name"]).validate(call["arguments"])
                return {"name": "no_such_action", "arguments": {}}
            except Exception:  # noqa: BLE001 - the call is malformed, as wanted
                pass
        return call

    def _any_call(self, name: str) -> dict[str, Any]:
        """A well-formed call of ``name`` (decoded from a sample), as a fresh dict."""
        if self.codec is None:
            return {"name": name, "arguments": {}}
        idx = self.codec.index[name]
        inner = self.codec._codecs[idx].space.sample()  # noqa: SLF001 - a sample of one action
        element = inner if self.codec.single else (np.int64(idx), inner)
        return copy.deepcopy(self.codec.decode(element))

    # -- raw elements outside the action space
    def out_of_space(self) -> Any:
        base = self.space.sample()
        for _ in range(20):
            candidate = self._mutate(self.space, copy.deepcopy(base))
            try:
                inside = self.space.contains(candidate)
            except Exception:  # noqa: BLE001
                inside = False
            if not inside:
                return candidate
        return None

    def _mutate(self, space: spaces.Space, x: Any) -> Any:
        r = self.rng
        junk = [None, "0", 1.5, float("nan"), [0], {}, Ellipsis, b"\x00"]
        if isinstance(space, spaces.OneOf):
            kind = int(r.integers(4))
            if kind == 0:
                return (int(r.choice([-1, len(space.spaces), -len(space.spaces) - 1, 2**64])), x[1])
            if kind == 1:
                return (float(x[0]) + 0.5, x[1])
            if kind == 2:
                return junk[int(r.integers(len(junk)))]
            return (x[0], self._mutate(space.spaces[int(x[0])], x[1]))
        if isinstance(space, spaces.Dict):
            keys = list(space.spaces)
            kind = int(r.integers(5)) if keys else 1
            if kind == 0:
                x.pop(keys[int(r.integers(len(keys)))])
                return x
            if kind == 1:
                x["no_such_key"] = 0
                return x
            if kind == 2 and not keys:
                return [x]
            key = keys[int(r.integers(len(keys)))]
            x[key] = self._mutate(space.spaces[key], x[key])
            return x
        if isinstance(space, spaces.Discrete):
            lo, n = int(space.start), int(space.n)
            return [lo - 1, lo - 7, lo + n, 2**64, -(2**70), float(lo) + 0.5, float("inf"), float("nan"),
                    np.array([lo, lo]), None, str(lo), np.float64(lo)][int(r.integers(12))]
        if isinstance(space, spaces.Box):
            return [np.full((2,) + space.shape, space.low.flat[0]), np.array([np.nan]), np.array([np.inf]),
                    float(space.low.flat[0]), np.array(["a"]), space.high + 1.0, None][int(r.integers(7))]
        if isinstance(space, spaces.Text):
            return [2**64, None, b"bytes", 3.5, "x" * (space.max_length + 1), ["a"]][int(r.integers(6))]
        if isinstance(space, spaces.Sequence):
            if len(x) and r.random() < 0.5:
                items = list(x)
                i = int(r.integers(len(items)))
                items[i] = self._mutate(space.feature_space, items[i])
                return tuple(items)
            return [list(x), None, "abc", 5][int(r.integers(4))]
        return None


# ---------------------------------------------------------------------------- the check
def _make(env_or_id: gym.Env | str, make_kwargs: Mapping[str, Any] | None) -> tuple[gym.Env, str, bool]:
    if isinstance(env_or_id, str):
        env = gym.make(env_or_id, **dict(make_kwargs or {}))
        return env, env_or_id, bool(env.spec is not None and env.spec.nondeterministic)
    spec = getattr(env_or_id, "spec", None)
    name = spec.id if spec is not None else type(env_or_id.unwrapped).__name__
    return env_or_id, name, bool(spec is not None and spec.nondeterministic)


def _pick_action(maker: _ActionMaker, draw: float) -> tuple[Any, str, bool]:
    """A mixed action by ``draw`` in [0, 1): (action, kind, whether it must be refused).

    45% legal, 15% masked, 15% malformed, 15% outside the space, 10% sampled; a kind the env
    cannot offer (no legal or masked choice, no out-of-space element) falls back to sampled.
    """
    if draw < 0.45:
        action = maker.legal()
        return (action, "legal", False) if action is not None else (maker.sampled(), "sampled", False)
    if draw < 0.6:
        action = maker.masked()
        return (action, "masked", True) if action is not None else (maker.sampled(), "sampled", False)
    if draw < 0.75:
        return maker.malformed_call(), "malformed", True
    if draw < 0.9:
        action = maker.out_of_space()
        return (action, "out-of-space", True) if action is not None else (maker.sampled(), "sampled", False)
    return maker.sampled(), "sampled", False


def _check_step(report: ContractReport, kind: str, expect_invalid: bool, action: Any, reward: Any,
                info: dict, info_keys: set[str]) -> bool:
    """The checks of every transition (fixed info keys, finite reward, legal runs, invalid is refused).

    Returns whether the env took the action as valid.
    """
    if set(info) != info_keys:
        report.fail(f"info keys changed after {kind} action: {sorted(set(info) ^ info_keys)}")
    if not (isinstance(reward, (int, float, np.floating)) and math.isfinite(reward)):
        report.fail(f"reward {reward!r} is not a finite number")
    valid = info.get("valid", True)
    if kind == "legal":
        report.legal_steps += 1
        if not valid:
            report.fail(f"a legal action (mask said yes) was refused: {_short(action)}: {info.get('error')}")
    if expect_invalid and valid:
        report.fail(f"a {kind} action ran instead of being refused: {_short(action)}")
    return bool(valid)


@dataclass
class _Before:
    """What a step must leave unchanged if the env refuses it."""

    obs: Any
    state: Any
    scratch: dict[str, Any] = field(default_factory=dict)


def _check_refusal(env: gym.Env, report: ContractReport, kind: str, action: Any, obs: Any, reward: Any,
                   info: dict, before: _Before, penalty: float, static_obs: bool) -> None:
    """A refused action: a reason given, observation and state unchanged, the penalty as reward."""
    if not info.get("error"):
        report.fail(f"an invalid {kind} action gave no reason in info['error']: {_short(action)}")
    if static_obs and not same(obs, before.obs):
        report.fail(f"an invalid {kind} action changed the observation: {_short(action)}")
    after_state = state_snapshot(env)
    if after_state != before.state:
        where = _first_difference(before.state, after_state)
        report.fail(f"an invalid {kind} action changed the env state at {where}: {_short(action)}")
    scratch = transient_snapshot(env)
    for name, value in scratch.items():
        if before.scratch.get(name) != value:
            report.transient_changes[name] = report.transient_changes.get(name, 0) + 1
    if not math.isclose(float(reward), -penalty):
        report.fail(f"an invalid action gave reward {reward}, expected {-penalty}")


@dataclass
class _Episodes:
    """Resets ``env`` for each new episode (seed, seed + 1, ...), counting and recording them."""

    env: gym.Env
    report: ContractReport
    seed: int
    record: list | None
    count: int = 0

    def start(self) -> tuple[Any, dict]:
        """Reset for the next episode."""
        obs, info = self.env.reset(seed=self.seed + self.count)
        self.count += 1
        self.report.episodes += 1
        if self.record is not None:
            self.record.append(("reset", obs, info))
        return obs, info


def _play(env: gym.Env, report: ContractReport, *, steps: int, seed: int, record: list | None,
          static_obs: bool = True) -> None:
    """Play ``steps`` mixed steps from ``reset(seed=seed)``, checking every transition.

    ``static_obs=False`` skips the "invalid step, same observation" check for envs whose world
    moves by itself (a real desktop's clock and cursor blink); their state is still checked.
    """
    rng = np.random.default_rng(seed)
    maker = _ActionMaker(env, rng)
    penalty = float(getattr(env.unwrapped, "invalid_action_penalty", 0.0))
    default_weights = (math.isclose(getattr(env.unwrapped, "progress_weight", 0.5), 0.5)
                       and math.isclose(getattr(env.unwrapped, "optimality_weight", 0.5), 0.5))
    episodes = _Episodes(env, report, seed, record)
    try:
        obs, info = episodes.start()
    except Exception as exc:  # noqa: BLE001
        report.exceptions += 1
        report.fail(f"reset raised {type(exc).__name__}: {exc}")
        return
    info_keys = set(info)
    ret = 0.0
    for _ in range(steps):
        action, kind, expect_invalid = _pick_action(maker, rng.random())
        report.invalid_tried += expect_invalid
        report.out_of_space_tried += kind == "out-of-space"
        # a legal action needs no snapshot: its refusal is a failure of its own (_check_step)
        before = None if kind == "legal" else _Before(state=state_snapshot(env), obs=copy.deepcopy(obs),
                                                      scratch=transient_snapshot(env))
        try:
            obs, reward, terminated, truncated, info = env.step(action)
        except Exception as exc:  # noqa: BLE001
            report.exceptions += 1
            report.fail(f"step({_short(action)}) [{kind}] raised {type(exc).__name__}: {exc}")
            try:
                obs, info = episodes.start()
            except Exception:  # noqa: BLE001
                return
            ret = 0.0
            continue
        report.steps += 1
        if record is not None:
            record.append(("step", _freeze(action, 0, set()), obs, reward, terminated, truncated, info))
        if not _check_step(report, kind, expect_invalid, action, reward, info, info_keys) and before is not None:
            _check_refusal(env, report, kind, action, obs, reward, info, before, penalty, static_obs)
        ret += float(reward)
        if terminated or truncated:
            if default_weights and penalty == 0.0 and not -1e-9 <= ret <= 1 + 1e-9:
                report.fail(f"episode return {ret} outside [0, 1]")
            obs, info = episodes.start()
            ret = 0.0


def check_contract(
    env_or_id: gym.Env | str,
    *,
    steps: int = 2000,
    seed: int = 0,
    make_kwargs: Mapping[str, Any] | None = None,
    determinism_steps: int = 300,
) -> ContractReport:
    """Play ``steps`` mixed steps on an env (an id is made with ``gym.make``) and check the contract.

    Returns a :class:`ContractReport`; call ``raise_if_failed()`` on it in a test. Determinism is
    checked on the first ``determinism_steps`` steps by replaying them in a second env. For envs
    registered as ``nondeterministic`` (the real desktop) both the determinism check and the
    unchanged-observation check are skipped: their screen changes by itself.
    """
    env, name, nondeterministic = _make(env_or_id, make_kwargs)
    report = ContractReport(name)
    try:
        _play(env, report, steps=steps, seed=seed, record=None, static_obs=not nondeterministic)
        if determinism_steps and isinstance(env_or_id, str) and not nondeterministic:
            first: list = []
            second: list = []
            for trace in (first, second):
                again = gym.make(env_or_id, **dict(make_kwargs or {}))
                try:
                    _play(again, ContractReport(name), steps=determinism_steps, seed=seed + 7919, record=trace)
                finally:
                    again.close()
            for i, (a, b) in enumerate(zip(first, second)):
                fa, fb = _freeze(a, 0, set()), _freeze(b, 0, set())
                if fa != fb:
                    report.fail(f"two seeded runs differ at record {i} ({a[0]}) at {_first_difference(fa, fb)}")
                    break
            if len(first) != len(second):
                report.fail("two seeded runs have different lengths")
    finally:
        if isinstance(env_or_id, str):
            env.close()
    return report
