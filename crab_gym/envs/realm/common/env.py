"""Small pieces the REALM envs share, so that P1, P2, P3/P4 and P11 behave alike.

* :class:`RealmEnv`: the base of every REALM env (instance swaps, the reference, optimality,
  pending plans, words for LLM prompts, ``render()``).
* :func:`goal_graph`, :func:`hhmm`, :func:`clipped`, :func:`classical_mds`, :func:`draw_seed`: helpers.
* :func:`checked_init`, :class:`InstanceKind`, :func:`check_option_keys`: constructor
  arguments checked the same way everywhere, with errors that say what *is* accepted.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import operator
import os
import warnings
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import networkx as nx
import numpy as np

from crab_gym.core.keywords import did_you_mean, unknown_keys_message
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.realm.common.clock_hours import MAX_HOUR
from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.obfuscation import ObfuscatedNames
from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.common.plan_score import episode_plan
from crab_gym.envs.realm.common.references import Reference, optimality_ratio
from crab_gym.envs.realm.common.viewer import Viewer, check_viewer
from crab_gym.envs.realm.common.yardstick import ReferenceSolve, Yardstick
from crab_gym.evaluation.unfinished import SCORE_METRICS

#: The REALM metrics an env reports at the end of every episode (resource usage, the sixth,
#: is measured by the runner, never by the env).
REALM_METRICS = SCORE_METRICS

#: Clock bound of the P1/P2 observations (two days, in minutes: the latest upstream clock hour).
DAY = MAX_HOUR * 60


@functools.lru_cache(maxsize=4096)
def hhmm(minute: float) -> str:
    """Minutes from midnight as ``HH:MM`` (kept for the minutes met again: every step's event
    lines write a few)."""
    minute = int(round(minute))
    return f"{minute // 60:02d}:{minute % 60:02d}"


def goal_graph(goal: Any, parts: Iterable[Any]) -> nx.DiGraph:
    """An evaluator graph where ``goal`` is checked once every sub-goal in ``parts`` passed."""
    graph = nx.DiGraph()
    graph.add_node(goal)
    for ev in parts:
        graph.add_edge(ev, goal)
    return graph


def classical_mds(travel: Any, floor: float = 0.0) -> np.ndarray:
    """2-D positions whose distances approximate the (symmetrised) travel times: a map-like
    layout for instances that come without coordinates. ``floor`` bounds the eigenvalues
    from below before their square root."""
    d = np.asarray(travel, dtype=np.float64)
    d = (d + d.T) / 2.0
    n = d.shape[0]
    j = np.eye(n) - np.ones((n, n)) / n
    b = -0.5 * j @ (d**2) @ j
    vals, vecs = np.linalg.eigh(b)
    top = np.argsort(vals)[::-1][:2]
    return vecs[:, top] * np.sqrt(np.maximum(vals[top], floor))


def clipped(values: Any, low: float, high: float, dtype: Any = np.float32) -> np.ndarray:
    """``np.clip(values, low, high).astype(dtype)`` (same values, NaN kept) at a third of its
    cost: the observations build several such arrays on every step."""
    return np.minimum(np.maximum(values, low), high).astype(dtype)


def draw_seed(rng: np.random.Generator) -> int:
    """A generator seed from the env's seeded ``np_random`` (so ``reset(seed=...)`` repeats)."""
    return int(rng.integers(0, 2**31 - 1))


# ====================================================================== argument checks
def check_option_keys(what: str, options: Mapping[Any, Any], valid: Sequence[str]) -> None:
    """Raise ValueError naming the valid keys if ``options`` has any other key."""
    unknown = [k for k in options if k not in valid]
    if unknown:
        raise ValueError(unknown_keys_message(what, unknown, valid))


def _env_label(cls: type) -> str:
    """``CampusTourEnv (Realm-P1-v0)``: the class, and its registered id when it has one."""
    target = f"{cls.__module__}:{cls.__qualname__}"
    ids = sorted(spec.id for spec in gym.registry.values() if spec.entry_point == target)
    return f"{cls.__qualname__} ({ids[0]})" if ids else cls.__qualname__


def _new_keywords(cls: type) -> frozenset[str]:
    """The keyword-only parameters of ``cls.__new__``: Python passes every constructor argument to
    ``__init__`` as well, but these are ``__new__``'s (``RealmEnv.__new__``'s ``obfuscate``)."""
    return _keyword_only(cls.__new__)


@functools.lru_cache(maxsize=256)
def _keyword_only(function: Callable[..., Any]) -> frozenset[str]:
    """Cached: :func:`checked_init` asks at every construction."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature (object.__new__)
        return frozenset()
    return frozenset(p.name for p in params if p.kind is p.KEYWORD_ONLY)


def checked_init(init: Callable[..., None]) -> Callable[..., None]:
    """Decorate an env's ``__init__`` so that a misspelled keyword (``gym.make(id,
    instanse=...)``) raises a TypeError listing the valid keywords and the nearest one,
    instead of Python's bare "unexpected keyword argument". The signature is kept
    (``inspect.signature`` follows ``__wrapped__``)."""
    sig = inspect.signature(init)
    params = [p for p in list(sig.parameters.values())[1:]]
    keywords = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    owner = init.__qualname__.rsplit(".", 1)[0]

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        for key in _new_keywords(type(self)) & kwargs.keys():  # the class's __new__ took them
            del kwargs[key]
        try:
            sig.bind(self, *args, **kwargs)
        except TypeError as exc:
            cls = type(self) if type(self).__qualname__ == owner else None
            label = _env_label(cls) if cls is not None else owner
            unknown = [k for k in kwargs if k not in keywords]
            if unknown:
                message = f"{label}: " + unknown_keys_message("keyword", unknown, keywords, noun="keywords")
            elif len(args) > len(positional):
                message = (
                    f"{label} takes {len(positional)} positional argument(s) ({', '.join(positional)}); "
                    f"pass the others by keyword: {', '.join(keywords)}"
                )
            else:
                message = f"{label}: {exc}; valid keywords: {', '.join(keywords)}"
            raise TypeError(message) from None
        init(self, *args, **kwargs)

    return wrapper


@dataclass(frozen=True)
class InstanceKind:
    """What an env's ``instance`` argument accepts, to check it and explain a wrong one.

    Attributes:
        problem: ``"P1"`` ... (names the problem in messages).
        types: instance classes accepted as they are.
        names: the shipped instance names.
        list_all: the call that lists every shipped name (shown to the user).
        examples: a few shipped names to show.
        files: how a file path is described (``"a path to a JSON file"``).
        mappings: whether a mapping (a parsed JSON instance) is accepted.
    """

    problem: str
    types: tuple[type, ...]
    names: Callable[[], Sequence[str]]
    list_all: str
    examples: tuple[str, ...]
    files: str = "a path to a JSON file"
    mappings: bool = True

    def accepts(self) -> str:
        """The sentence that says what ``instance`` may be."""
        n = len(self.names())
        kinds = [
            f"a shipped {self.problem} instance name ({', '.join(self.examples)}, ...; all {n}: {self.list_all})",
            self.files,
        ]
        if self.mappings:
            kinds.append("a mapping (a parsed instance)")
        objects = " or ".join(t.__name__ for t in self.types)
        return ", ".join(kinds) + f", or a {objects}"

    def check(self, value: Any) -> None:
        """Raise TypeError saying what is accepted if ``value`` cannot be an instance."""
        ok = isinstance(value, (str, os.PathLike, *self.types)) or (self.mappings and isinstance(value, Mapping))
        if not ok:
            shown = repr(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise TypeError(f"instance must be {self.accepts()}; got {type(value).__name__} {shown}")

    def load(self, value: Any, loader: Callable[[Any], Any]) -> Any:
        """``loader(value)`` after :meth:`check`; a name that is neither shipped nor a file
        gets the nearest shipped name and the way to list them all added to the loader's
        error (same exception class)."""
        self.check(value)
        try:
            return loader(value)
        except (ValueError, KeyError, FileNotFoundError) as exc:
            if not isinstance(value, (str, os.PathLike)) or Path(value).is_file() or str(value) in self.names():
                raise
            hinted = _with_hint(exc, f"{did_you_mean(value, self.names())}; list every name with {self.list_all}")
            if hinted is None:
                raise
            raise hinted from exc


def _with_hint(exc: BaseException, hint: str) -> BaseException | None:
    """A copy of ``exc`` (same class) whose message ends with ``hint``; None if the class
    cannot be rebuilt from a message."""

    if isinstance(exc, InstanceFormatError):
        return InstanceFormatError(exc.source, exc.problem + hint, field=exc.field, line=exc.line)
    message = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    try:
        return type(exc)(message + hint)
    except Exception:  # noqa: BLE001 - an exception class with another constructor
        return None


def _obfuscation_seed(obfuscate: Any) -> int:
    """The renaming's seed of ``obfuscate=True`` (0) or of a whole number >= 0; else a ValueError naming it."""
    if obfuscate is True:
        return 0
    try:
        seed = operator.index(obfuscate)
    except TypeError:
        seed = -1
    if isinstance(obfuscate, bool) or seed < 0:
        raise ValueError(f"obfuscate must be True, False or a seed (a whole number >= 0), got {obfuscate!r}")
    return int(seed)


class RealmEnv(CrabEnv):
    """The base of every REALM env: what they all do the same way, written once.

    It holds its parts: the :class:`~.yardstick.Yardstick` (``env.yardstick``: the reference,
    shipped, cached or solved after the episode, and the deferred adaptation re-solve), the
    family's ``instance_source`` (loads and draws instances), its ``checker`` (the independent
    plan checker) and its ``viewer`` (``render()``, ``describe()``). A family writes its problem
    as hooks; it never overrides ``step``, ``reset`` or ``_after_action``.

    **Hooks a family must write** (abstract: a class missing one cannot be instantiated, and
    the error names it):

    ====================  ==========================================================
    ``_use_instance``     make an instance the current one (the base forgets its reference)
    ``_check_fits``       raise ValueError if an instance does not fit the env's spaces
    ``_restart``          put the current instance back to its start
    ``_get_obs``          the observation (fresh arrays)
    ``_build_graph``      the sub-goal DAG (``_instance_graph`` keeps it per instance)
    ``_is_terminated``    whether the episode is over
    ``_agent_cost``       the plan's cost in the reference's units (None: no plan)
    ====================  ==========================================================

    **Optional hooks** (the default in brackets):

    ==========================  ====================================================
    ``_action_mask``            legal flat actions [all]
    ``_check_action``           why a validated call is illegal now [None]
    ``_plan_feasible``          whether the plan meets every hard constraint [True]
    ``_final_info``             ``(metrics, solution)`` at the episode's end [empty]
    ``_solution``               the plan as ``info["solution"]`` reports it [empty]
    ``_extra_info``             extra ``info`` keys, the same on every call [none]
    ``_solve_reference``        the reference lookup [the ``reference_lookup`` attribute]
    ``_provisional_reference``  the yardstick while the reference waits [none: 0]
    ``_optimality``             the ratio [``optimality_ratio`` of cost and reference]
    ``_begin_step``             first in every step [clears the event text]
    ``_fast_step``              a legal hot action carried out cheaply [none]
    ``_progress_may_change``    whether an action may pass a sub-goal [True]
    ``_step_reward``            another reward mode [the default reward]
    ``_optimality_reward``      the optimality term [``optimality_weight`` x ratio]
    ``task_description``        the task in words [the class docstring's first paragraph]
    ``joint_pass_call``         the move when every agent passes [first unowned legal]
    ==========================  ====================================================

    **Class attributes**: ``instance_source``, ``reference_lookup``, ``checker``, ``viewer``,
    ``agent_arguments`` (multi-agent view), ``reference_shapes_episode`` (P7),
    ``adaptation_struck`` (envs with disruptions), ``transient_attributes`` and
    ``derived_attributes`` (what the contract test's snapshots leave out).

    ``_check_action`` may keep a validated plan in ``self._pending`` for the action to carry
    out; it is dropped after every step, so a stale plan never runs. ``self._last_event`` (the
    step's event text) is cleared before every step.
    """

    def __new__(cls, *args: Any, obfuscate: bool | int | None = False, **kwargs: Any) -> Any:
        """``obfuscate=True`` (or a seed): the env wrapped in
        :class:`~crab_gym.envs.realm.common.obfuscation.ObfuscatedNames`, the same problem under
        other names, so that a model cannot recall the instance (docs/llm-evaluation.md); a plan
        scores the same under renaming. ``gym.make(id, obfuscate=3)`` comes here: Gymnasium hands
        every keyword to the entry point, which stays the env class."""
        if obfuscate is False or obfuscate is None:
            return super().__new__(cls)
        seed = _obfuscation_seed(obfuscate)
        return ObfuscatedNames(cls(*args, **kwargs), seed=seed)

    #: Per-step scratch, not state: an invalid step may clear them (see CrabEnv).
    transient_attributes: tuple[str, ...] = ("_pending", "_last_event")
    #: The sub-goal graph built once per instance (see CrabEnv).
    derived_attributes: tuple[str, ...] = ("_graph_of",)
    #: Where the family's instances come from
    #: (:class:`~crab_gym.envs.realm.common.instance_source.InstanceSource`): the constructor
    #: starts with ``self._generator, inst = self.instance_source.start(instance, generator)``
    #: and the base loads and draws instances at reset through it.
    instance_source: ClassVar[Any] = None
    #: The family's reference lookup, ``instance -> Reference`` (shipped, cached or solved);
    #: with it the base finds the reference. Set it with ``staticmethod(...)``.
    reference_lookup: ClassVar[Callable[[Any], Reference] | None] = None
    #: The checked ``generator`` options, or the user's callable ``(rng) -> instance`` (None: no
    #: generator); the family's ``__init__`` sets it.
    _generator: Any
    #: Multi-agent view (``crab_gym.parallel_env``): the action arguments that name the actor
    #: of a flat action (``("vehicle",)``); empty: a single-agent problem.
    agent_arguments: ClassVar[tuple[str, ...]] = ()
    #: The reference shapes the episode itself, not only its score (P7: its sub-goals are shares
    #: of the best known relief): it is then looked up at ``reset()`` -- solved there for an
    #: instance with none shipped or cached -- whatever ``reference_solve`` says.
    reference_shapes_episode: ClassVar[bool] = False
    #: The family's independent plan checker, the ``check`` role of its ProblemSpec
    #: (``check(instance, plan) -> PlanCheck``): :meth:`check_plan` asks it. Set it with
    #: ``staticmethod(check)``.
    checker: ClassVar[Callable[[Any, Any], PlanCheck] | None] = None
    #: How the env is shown (``render()``, ``describe()``): the family's viewer part, which the
    #: ``viewer=`` keyword replaces for one env.
    viewer: ClassVar[Viewer]
    #: ``env -> whether a disruption struck the episode``: set by an env with disruptions
    #: (``DisruptedRealmEnv``), whose metrics then report ``adaptation_pending``; None: none.
    adaptation_struck: ClassVar[Callable[[Any], bool] | None] = None

    def __init__(self, actions: Sequence[Any], *, reference: float | None = None,
                 reference_solve: ReferenceSolve = "deferred", viewer: Viewer | None = None,
                 **kwargs: Any) -> None:
        super().__init__(actions, **kwargs)
        #: The reference and its deferred solves (:class:`~.yardstick.Yardstick`).
        self.yardstick = Yardstick(self, reference_solve, reference)
        if check_viewer(viewer) is not None:
            self.viewer = viewer
        self._pending: Any = None
        self._last_event = ""
        self._graph_of: tuple[Any, nx.DiGraph] | None = None  # (instance, its graph)

    # ------------------------------------------------------------------ the reference
    @property
    def reference(self) -> Reference:
        """The current instance's reference (looked up or solved on first use, then kept).

        With ``reference_solve="deferred"`` (the default) a reference that is neither shipped
        nor cached is not solved here: until :meth:`finish_metrics` solves it, this is the
        family's provisional yardstick (:meth:`_provisional_reference`)."""
        return self.yardstick.current()

    @property
    def reference_solve(self) -> ReferenceSolve:
        """``"deferred"`` (no solve inside ``step()``/``reset()``) or ``"inline"``."""
        return self.yardstick.mode

    def solved_reference(self) -> Reference:
        """The reference, solved now if it waits for its solve (``reference_solve="deferred"``):
        for a policy or a user who wants it before the episode ends (``OraclePolicy`` submits
        its plan); ``step()`` and ``reset()`` never call it."""
        return self.yardstick.solved()

    def _provisional_reference(self) -> Reference:
        """The yardstick while the reference waits for its solve: none by default (the
        reward's optimality term is then 0 until :meth:`deferred_reward`, the metrics say
        ``optimality_pending``); a family
        with a bound it gets without a solver returns it (P11: the lower bound)."""
        return Reference(value=None, status="PENDING", source="pending")

    def _solve_reference(self) -> Reference:
        """The reference of the current instance: shipped, cached or solved now."""
        if self.reference_lookup is None:
            raise NotImplementedError(f"{type(self).__name__} sets no reference_lookup")
        return self.reference_lookup(self.instance)

    # ------------------------------------------------------------------ instances
    def _next_instance(self, options: dict[str, Any] | None) -> bool:
        """Use the instance the reset asks for, or a freshly drawn one; False if neither
        applies (the current instance then restarts)."""
        new = (options or {}).get("instance")
        if new is not None:
            inst = self._load_instance(new)
            self._check_fits(inst)
        elif self._generator is not None:
            inst = self._draw_instance()
        else:
            return False
        self.yardstick.forget()  # the reference of the instance before is not this one's
        self._use_instance(inst)
        return True

    @abstractmethod
    def _check_fits(self, inst: Any) -> None:
        """Raise ValueError if ``inst`` does not fit the env's spaces."""
        raise NotImplementedError

    @abstractmethod
    def _use_instance(self, inst: Any) -> None:
        """Make ``inst`` the current instance (the base has forgotten the reference before)."""
        raise NotImplementedError

    def _load_instance(self, spec: Any) -> Any:
        if self.instance_source is None:
            raise NotImplementedError(f"{type(self).__name__} sets no instance_source")
        return self.instance_source.load(spec)

    def _draw_instance(self) -> Any:
        if self.instance_source is None:
            raise NotImplementedError(f"{type(self).__name__} sets no instance_source")
        inst = self.instance_source.draw(self._generator, self.np_random)
        if callable(self._generator):  # a user's generator promises no shape: check it fits the spaces
            self._check_fits(inst)
        return inst

    # ------------------------------------------------------------------ optimality
    @abstractmethod
    def _agent_cost(self) -> float | None:
        """The cost of the agent's plan, in the reference's units (None: no plan)."""
        raise NotImplementedError

    def _plan_feasible(self) -> bool:
        """Whether the agent's plan meets every hard constraint (else optimality is 0)."""
        return True

    def _optimality(self) -> float:
        return optimality_ratio(self.reference.measure, self._agent_cost(), self._plan_feasible())

    def _terminal_optimality(self) -> float:
        """Measured by the yardstick: never a solve inside ``step()`` while solves are deferred
        (:meth:`~.yardstick.Yardstick.terminal_optimality`)."""
        return self.yardstick.terminal_optimality()

    def _episode_end_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The episode's metrics without a solve inside ``step()``: what needs a solve that
        waits is None and ``optimality_pending`` says so; :meth:`finish_metrics` fills it in."""
        return self.yardstick.episode_end()

    # ------------------------------------------------------------------ steps and resets
    def _begin_step(self) -> None:
        self._last_event = ""

    def _end_step(self) -> None:
        self._pending = None

    def _reset_state(self, options: dict[str, Any] | None) -> None:
        if not self._next_instance(options):
            self._restart()
        self.yardstick.at_reset(self.reference_shapes_episode)
        self._pending = None
        self._last_event = ""

    @abstractmethod
    def _restart(self) -> None:
        """Put the current instance back to its initial state."""
        raise NotImplementedError

    def _solution(self) -> dict[str, Any]:
        """The episode's plan as ``info["solution"]`` reports it (needs no reference: it is
        reported even while the metrics wait for a solve)."""
        return {}

    def _instance_graph(self, build: Callable[[], nx.DiGraph]) -> nx.DiGraph:
        """``build()``'s sub-goal graph, built once per instance: for a ``_build_graph`` whose
        evaluators depend on the instance only (they read the env they are given), so every
        episode on the instance reuses the graph (and its checked order, see CrabEnv)."""
        if self._graph_of is None or self._graph_of[0] is not self.instance:
            self._graph_of = (self.instance, build())
        return self._graph_of[1]

    # ------------------------------------------------------------------ deferred solves
    def finish_metrics(self) -> dict[str, Any]:
        """Run the solves the finished episode deferred -- the adaptation re-solve, the
        reference (and solo baselines) of an instance that had none shipped or cached -- and
        return the episode's complete metrics (the last ``info["metrics"]`` with ``optimality``,
        ``coordination``, ``adaptation`` filled in; ``adaptation_pending`` and
        ``optimality_pending`` False). The evaluation runner (``crab-gym run``, ``Benchmark``,
        ``check_scoring``) calls it; call it yourself after an episode you stepped by hand. The
        metrics are the same as with ``reference_solve="inline"`` and
        ``adaptation_reference="resolve"``, which solve inside the last ``step()``."""
        return self.yardstick.finish()

    def deferred_reward(self) -> float:
        """The part of the finished episode's return its last reward withheld: the optimality
        term measured against the reference, solved now if it still waits (as by
        :meth:`finish_metrics`), minus the term the last ``step()`` gave against a stand-in
        (0, or P11's lower bound). The sum of the rewards plus this is the return of
        ``reference_solve="inline"``. 0 when nothing waited (a shipped instance), before the
        episode ends, and in a reward mode without an optimality term. The evaluation runner
        adds it to the return (``EpisodeResult.deferred_return``); add it yourself after an
        episode you stepped by hand."""
        return self.yardstick.deferred_reward()

    def finish_adaptation(self) -> dict[str, Any]:
        """Deprecated: :meth:`finish_metrics` (its first name, when only the adaptation
        re-solve waited)."""
        warnings.warn("finish_adaptation() is finish_metrics(); the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return self.finish_metrics()

    # ------------------------------------------------------------------ the REALM metrics
    def _info(self, call: dict[str, Any] | None, valid: bool, error: str, passed: list[str],
              metrics: dict[str, Any], solution: dict[str, Any]) -> dict[str, Any]:
        """Every episode end reports each of the :data:`REALM_METRICS`: those a problem
        does not measure (coordination of a single actor, adaptation without disruptions)
        are ``None``, the one way "not applicable" is reported."""
        if metrics:
            metrics = self.yardstick.complete(metrics)
        return super()._info(call, valid, error, passed, metrics, solution)

    # ------------------------------------------------------------------ the independent checker
    def check_plan(self, plan: Mapping[str, Any] | None = None) -> PlanCheck:
        """The family's independent checker on ``plan`` (``submit_plan`` arguments) for the
        current instance; without ``plan``, on the episode's own plan as ``info["solution"]``
        reports it. Changes nothing: an agent may ask what a plan would cost before it submits.

        The env scores its episodes with its own simulator (fast enough for a step at a
        time); the scoring check (``crab_gym.checks.scoring``) asks this checker about
        every episode it plays and fails where the two disagree."""
        if self.checker is None:
            raise NotImplementedError(f"{type(self).__name__} names no checker")
        return self.checker(self.instance, copy.deepcopy(dict(self._solution() if plan is None else plan)))

    def plan_arguments(self) -> dict[str, Any]:
        """The episode's plan as ``submit_plan`` arguments (``info["solution"]`` without what
        it reports besides the plan): submitted to a fresh env on the same instance (at its
        start and again at every pause), it scores what the episode scored."""
        return episode_plan(self)

    def plan_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """:meth:`plan_arguments` as JSON text, also written to ``path`` if given: the plan
        file ``crab-gym score --env ID --instance NAME FILE`` reads."""
        text = json.dumps(self.plan_arguments())
        if path is not None:
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text

    # ------------------------------------------------------------------ multi-agent view
    def joint_pass_call(self) -> dict[str, Any] | None:
        """The move made when every agent of a joint step passes: the first legal flat action
        no agent owns (``wait``, ``next_day``), or None (then nothing happens)."""
        mask = self.action_masks()
        for index in np.flatnonzero(mask):
            call = self.codec.flat_to_call(int(index))
            if not any(arg in call["arguments"] for arg in self.agent_arguments):
                return call
        return None

    # ------------------------------------------------------------------ words, for LLM agents
    @property
    def task_description(self) -> str:
        """What the agent must achieve, in words (the first paragraph of an LLM prompt)."""
        doc = (type(self).__doc__ or type(self).__name__).strip().split("\n\n")[0]
        return " ".join(doc.split())

    def describe(self) -> str:
        """The current state in words (the viewer's text)."""
        return self.viewer.text(self)

    def render(self) -> Any:
        if self.render_mode == "ansi":
            return self.viewer.text(self)
        if self.render_mode == "rgb_array":
            return self.viewer.image(self)
        return None
