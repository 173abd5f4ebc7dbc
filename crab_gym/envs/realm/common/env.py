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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import gymnasium as gym
import networkx as nx
import numpy as np

from crab_gym.core.keywords import did_you_mean, unknown_keys_message  # noqa: F401 - re-exported
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.realm.common.clock_hours import MAX_HOUR
from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.obfuscation import ObfuscatedEnv
from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.common.plan_score import episode_plan
from crab_gym.envs.realm.common.references import (
    NOT_APPLICABLE,
    Reference,
    SolvePending,
    deferring_solves,
    optimality_ratio,
    solves_deferred,
)
from crab_gym.envs.realm.common.viewer import Viewer, check_viewer
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
        if kwargs.get("obfuscate", True) in (False, None):  # RealmEnv.__new__ took it: a plain env
            del kwargs["obfuscate"]
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

    * **Instances**: ``reset(options={"instance": ...})`` swaps in another instance of the same
      shape, a ``generator`` (``self._generator``, None: none) draws a fresh one on every
      reset; the base loads and draws through :attr:`instance_source`, the family implements
      ``_check_fits`` (raise ValueError if the instance does not fit the env's spaces),
      ``_use_instance`` (which calls :meth:`_forget_reference`) and ``_restart`` (put the
      current instance back to its start).
    * **The reference**: :attr:`reference` is a :class:`~crab_gym.envs.realm.common.references.Reference`
      (value, status, bound, solver, time limit, workers, plan): the ``reference=`` value
      given to the env, else the family's ``_solve_reference()`` (shipped, cached or solved
      once), looked up once per instance.
    * **Optimality**: ``optimality_ratio(reference, _agent_cost(), _plan_feasible())``.
    * **Plans**: ``_check_action`` may keep a validated plan in ``self._pending`` for the
      action to carry out; it is dropped after every step, so a stale plan never runs.
      ``self._last_event`` (the step's event text) is cleared before every step.
    * **Words and pictures**: :attr:`task_description` and :meth:`describe` for LLM prompts,
      ``render()`` for ``ansi``/``rgb_array``: the env's :attr:`viewer` part
      (:class:`~crab_gym.envs.realm.common.viewer.Viewer`, the family's by default,
      ``viewer=`` another one).

    A family implements problem-level hooks only; it never overrides ``step``, ``reset`` or
    ``_after_action``.
    """

    def __new__(cls, *args: Any, obfuscate: bool | int | None = False, **kwargs: Any) -> Any:
        """``obfuscate=True`` (or a seed): the same env under other names, so that a model
        cannot recall the instance (:class:`~crab_gym.envs.realm.common.obfuscation.ObfuscatedEnv`,
        docs/llm-evaluation.md); a plan scores the same under renaming."""
        if obfuscate is False or obfuscate is None:
            return super().__new__(cls)
        return ObfuscatedEnv(cls(*args, **kwargs), seed=_obfuscation_seed(obfuscate))

    #: Per-step scratch, not state: an invalid step may clear them (see CrabEnv).
    transient_attributes: tuple[str, ...] = ("_pending", "_last_event")
    #: The sub-goal graph built once per instance (see CrabEnv).
    derived_attributes: tuple[str, ...] = ("_graph_of",)
    #: Where the family's instances come from (an ``InstanceSource`` with ``load(spec)`` and
    #: ``draw(options, rng)``): with it the base loads and draws instances.
    instance_source: ClassVar[Any] = None
    #: The family's reference lookup, ``instance -> Reference`` (shipped, cached or solved);
    #: with it the base finds the reference. Set it with ``staticmethod(...)``.
    reference_lookup: ClassVar[Callable[[Any], Reference] | None] = None
    #: The checked ``generator`` options (None: no generator); the family's ``__init__`` sets it.
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

    def __init__(self, actions: Sequence[Any], *, reference: float | None = None,
                 reference_solve: Literal["deferred", "inline"] = "deferred", viewer: Viewer | None = None,
                 **kwargs: Any) -> None:
        super().__init__(actions, **kwargs)
        if reference_solve not in ("deferred", "inline"):
            raise ValueError(f'reference_solve must be "deferred" or "inline", got {reference_solve!r}')
        if check_viewer(viewer) is not None:
            self.viewer = viewer
        self.reference_solve = reference_solve
        self._fixed_reference = None if reference is None else float(reference)
        self._reference: Reference | None = None
        self._reference_pending = False  # no reference at hand without a solve: it waits
        self._reference_solved = False  # the reference came from a solve or its cache (not shipped)
        self._pending: Any = None
        self._last_event = ""
        self._adaptation_deferred = False  # the finished episode's adaptation solve waits
        self._finishing = False  # finish_metrics() is running the deferred solves now
        # the last reward's optimality where it was measured against a stand-in for a reference
        # that waited (else None), and the optimality measured once that reference is known:
        # their difference is the deferred reward (deferred_reward())
        self._waited_optimality: float | None = None
        self._settled_optimality: float | None = None
        self._graph_of: tuple[Any, nx.DiGraph] | None = None  # (instance, its graph)

    # ------------------------------------------------------------------ the reference
    @property
    def reference(self) -> Reference:
        """The current instance's reference (looked up or solved on first use, then kept).

        With ``reference_solve="deferred"`` (the default) a reference that is neither shipped
        nor cached is not solved here: until :meth:`finish_metrics` solves it, this is the
        family's provisional yardstick (:meth:`_provisional_reference`)."""
        if self._reference is None:
            if self._fixed_reference is not None:
                self._reference, self._reference_solved = Reference.given(self._fixed_reference), False
            elif self._reference_pending and self._defers_solves():
                return self._waiting_reference()
            elif not self._look_up_reference(solve=not self._defers_solves()):
                return self._waiting_reference()
        return self._reference

    def solved_reference(self) -> Reference:
        """The reference, solved now if it waits for its solve (``reference_solve="deferred"``):
        for a policy or a user who wants it before the episode ends (``OraclePolicy`` submits
        its plan); ``step()`` and ``reset()`` never call it."""
        if self._reference is None and self._fixed_reference is None:
            self._look_up_reference(solve=True)
        return self.reference

    def _look_up_reference(self, solve: bool) -> bool:
        """Find the reference without a solve (shipped, or cheap to compute), else solve it if
        ``solve`` (then the reward does not use it: :meth:`_terminal_optimality`); False if it
        waits for a solve."""
        try:
            with deferring_solves():
                found, solved = self._solve_reference(), False
        except SolvePending:
            if not solve:
                self._reference_pending = True
                return False
            found, solved = self._solve_reference(), True
        self._reference, self._reference_pending, self._reference_solved = found, False, solved
        return True

    def _forget_reference(self) -> None:
        """The instance changed: look its reference up again when next needed."""
        self._reference = None
        self._reference_pending = self._reference_solved = False

    def _defers_solves(self) -> bool:
        """Whether a solve asked for now waits for :meth:`finish_metrics`."""
        return self.reference_solve == "deferred" and not self._finishing

    def _waiting_reference(self) -> Reference:
        """What stands for a reference that waits for its solve: the provisional yardstick; but
        where there is none and the episode's end is being scored, :class:`SolvePending`, so that
        nothing is scored against a missing value."""
        provisional = self._provisional_reference()
        if provisional.measure is None and solves_deferred():
            raise SolvePending("the reference")
        return provisional

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
        self._use_instance(inst)
        return True

    def _check_fits(self, inst: Any) -> None:
        """Raise ValueError if ``inst`` does not fit the env's spaces."""
        raise NotImplementedError

    def _use_instance(self, inst: Any) -> None:
        """Make ``inst`` the current instance (and call :meth:`_forget_reference`)."""
        raise NotImplementedError

    def _load_instance(self, spec: Any) -> Any:
        if self.instance_source is None:
            raise NotImplementedError(f"{type(self).__name__} sets no instance_source")
        return self.instance_source.load(spec)

    def _draw_instance(self) -> Any:
        if self.instance_source is None:
            raise NotImplementedError(f"{type(self).__name__} sets no instance_source")
        return self.instance_source.draw(self._generator, self.np_random)

    # ------------------------------------------------------------------ optimality
    def _agent_cost(self) -> float | None:
        """The cost of the agent's plan, in the reference's units (None: no plan)."""
        raise NotImplementedError

    def _plan_feasible(self) -> bool:
        """Whether the agent's plan meets every hard constraint (else optimality is 0)."""
        return True

    def _optimality(self) -> float:
        return optimality_ratio(self.reference.measure, self._agent_cost(), self._plan_feasible())

    def _terminal_optimality(self) -> float:
        """The optimality term of the last reward. With ``reference_solve="deferred"`` it is
        measured against a reference found without a solve (shipped, given, or cheap to
        compute), else against the provisional yardstick (0 where there is none): never a
        solve inside ``step()``, and the same return for the same plan whatever has been
        solved or cached before (a reference a solve gave is not used for the reward). What
        that stand-in withheld, :meth:`deferred_reward` gives after the episode."""
        value, waited = self._step_time_optimality()
        self._waited_optimality, self._settled_optimality = (value if waited else None), None
        return value

    def _step_time_optimality(self) -> tuple[float, bool]:
        """``(optimality, whether it stood in for one against a reference that waits)``."""
        if not self._defers_solves():
            return self._optimality(), False
        if self._reference is not None and self._reference_solved:  # a solve outside step() gave it
            return self._with_reference(self._provisional_reference()), True
        try:
            with deferring_solves():
                value = self._optimality()
        except SolvePending:
            return 0.0, True
        return value, self._reference is None  # None: measured against the provisional yardstick

    def _with_reference(self, reference: Reference) -> float:
        """:meth:`_optimality` measured against ``reference`` (0 if it has no measure)."""
        if reference.measure is None:
            return 0.0
        kept = self._reference, self._reference_pending, self._reference_solved
        self._reference = reference
        try:
            return self._optimality()
        finally:
            self._reference, self._reference_pending, self._reference_solved = kept

    def _episode_end_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The episode's metrics without a solve inside ``step()``: what needs a solve that
        waits is None and ``optimality_pending`` says so; :meth:`finish_metrics` fills it in."""
        if not self._defers_solves():
            return self._final_info()
        try:
            with deferring_solves():
                metrics, solution = self._final_info()
        except SolvePending as waiting:  # a baseline (a solo plan ...) waits for its solve too
            self._reference_pending = True
            # the adaptation of an episode a disruption struck is withheld too: it waits for
            # finish_metrics() (``adaptation`` None alone would read "does not apply")
            struck = getattr(self, "_adaptation_state", None)
            self._adaptation_deferred = callable(struck) and struck() is not None
            return {"optimality_pending": True, "waiting_for": waiting.what}, self._solution()
        if self._reference_pending:
            metrics = {**metrics, "optimality": None, "coordination": None, "optimality_pending": True}
        return metrics, solution

    # ------------------------------------------------------------------ steps and resets
    def _begin_step(self) -> None:
        self._last_event = ""

    def _end_step(self) -> None:
        self._pending = None

    def _reset_state(self, options: dict[str, Any] | None) -> None:
        if not self._next_instance(options):
            self._restart()
        if self.reference_shapes_episode and self._reference is None and self._fixed_reference is None:
            self._look_up_reference(solve=True)
            self._reference_solved = False  # looked up at every reset of the instance: the reward may use it
        self._pending = None
        self._last_event = ""
        self._adaptation_deferred = False
        self._waited_optimality = self._settled_optimality = None

    def _restart(self) -> None:
        """Put the current instance back to its initial state."""
        raise NotImplementedError

    def _per_instance(self, name: str, compute: Callable[[], Any], *keys: Any) -> Any:
        """``compute()``, kept for the current instance and the same ``keys`` objects (by
        identity, e.g. the faced disruptions): for lookups an episode end or a reset repeats
        (references, one-vehicle baselines) that read files or hash the instance. While solves
        are deferred (:func:`deferring_solves`), only a value found that way is reused (a value
        found by a solve or in the cache is computed again, so it raises ``SolvePending`` as
        without the memo); an exception is never kept."""
        memo = self._cache.setdefault("per_instance", {})
        if memo.get("instance") is not self.instance:
            memo.clear()
            memo["instance"] = self.instance
        deferred = solves_deferred()
        hit = memo.get(name)
        if (hit is not None and (hit[2] or not deferred) and len(hit[0]) == len(keys)
                and all(a is b for a, b in zip(hit[0], keys))):
            return hit[1]
        value = compute()
        memo[name] = (keys, value, deferred)
        return value

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
    # (an env with disruptions defers its re-solve: DisruptedRealmEnv._defer_adaptation in
    # common.disruption_env sets _adaptation_deferred unless _finishing)
    def finish_metrics(self) -> dict[str, Any]:
        """Run the solves the finished episode deferred -- the adaptation re-solve, the
        reference (and solo baselines) of an instance that had none shipped or cached -- and
        return the episode's complete metrics (the last ``info["metrics"]`` with ``optimality``,
        ``coordination``, ``adaptation`` filled in; ``adaptation_pending`` and
        ``optimality_pending`` False). The evaluation runner (``crab-gym run``, ``Benchmark``,
        ``check_scoring``) calls it; call it yourself after an episode you stepped by hand. The
        metrics are the same as with ``reference_solve="inline"`` and
        ``adaptation_reference="resolve"``, which solve inside the last ``step()``."""
        if not self._terminated:
            raise RuntimeError("finish_metrics() needs a finished episode: step until terminated first")
        self._adaptation_deferred = False
        with self._solving_deferred():
            self.reference  # noqa: B018 - looked up (solved) now, outside any deferral
            metrics, _ = self._final_info()
            self._settle_optimality()
        return self._complete_metrics(metrics)

    def deferred_reward(self) -> float:
        """The part of the finished episode's return its last reward withheld: the optimality
        term measured against the reference, solved now if it still waits (as by
        :meth:`finish_metrics`), minus the term the last ``step()`` gave against a stand-in
        (0, or P11's lower bound). The sum of the rewards plus this is the return of
        ``reference_solve="inline"``. 0 when nothing waited (a shipped instance), before the
        episode ends, and in a reward mode without an optimality term. The evaluation runner
        adds it to the return (``EpisodeResult.deferred_return``); add it yourself after an
        episode you stepped by hand."""
        if not self._terminated or self._waited_optimality is None:
            return 0.0
        if self._settled_optimality is None:
            with self._solving_deferred():
                self._settle_optimality()
        return self._optimality_reward(self._settled_optimality) - self._optimality_reward(self._waited_optimality)

    def _settle_optimality(self) -> None:
        """Measure the optimality the last reward stood in for (solves allowed: called inside
        :meth:`_solving_deferred`), once per episode."""
        if self._waited_optimality is not None and self._settled_optimality is None:
            self._settled_optimality = float(self._optimality())

    @contextmanager
    def _solving_deferred(self) -> Iterator[None]:
        """Run the solves the finished episode deferred (a reference that waited is looked up
        again, solved if need be); what they leave in the per-instance memo is dropped after,
        so that the next episodes' deferred lookups do not find it."""
        self._finishing = True
        if self._reference_pending:
            self._forget_reference()
        try:
            yield
        finally:
            self._finishing = False
            if self.reference_solve == "deferred":
                self._cache.pop("per_instance", None)

    def finish_adaptation(self) -> dict[str, Any]:
        """:meth:`finish_metrics` (its first name, when only the adaptation re-solve waited)."""
        return self.finish_metrics()

    # ------------------------------------------------------------------ the REALM metrics
    def _complete_metrics(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """Every one of the :data:`REALM_METRICS` (None: not applicable) and, in an env with
        disruptions, whether its adaptation re-solve is still pending."""
        out = {**{name: NOT_APPLICABLE for name in REALM_METRICS}, **metrics}
        out["optimality_pending"] = bool(out.get("optimality_pending", False))
        if getattr(self, "adaptation_mode", None) is not None:
            out["adaptation_pending"] = self._adaptation_deferred
        return out

    def _info(self, call: dict[str, Any] | None, valid: bool, error: str, passed: list[str],
              metrics: dict[str, Any], solution: dict[str, Any]) -> dict[str, Any]:
        """Every episode end reports each of the :data:`REALM_METRICS`: those a problem
        does not measure (coordination of a single actor, adaptation without disruptions)
        are ``None``, the one way "not applicable" is reported."""
        if metrics:
            metrics = self._complete_metrics(metrics)
        return super()._info(call, valid, error, passed, metrics, solution)

    # ------------------------------------------------------------------ the independent checker
    def check_plan(self, plan: Mapping[str, Any] | None = None) -> PlanCheck:
        """The family's independent checker on ``plan`` (``submit_plan`` arguments) for the
        current instance; without ``plan``, on the episode's own plan as ``info["solution"]``
        reports it. Changes nothing: an agent may ask what a plan would cost before it submits.

        The env scores its episodes with its own simulator (fast enough for a step at a
        time); the scoring check (``crab_gym.envs.scoring_check``) asks this checker about
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
