"""The yardstick part of a REALM env: where its reference comes from, and when a solve may run.

A REALM env scores a plan against a reference (:class:`~.references.Reference`): the value
given to the env, a shipped record, a cached one, or a solve. A solve never runs inside
``step()`` or ``reset()`` by default (``reference_solve="deferred"``): the episode is scored
against what is at hand without one (a shipped record, the family's provisional yardstick such
as P11's lower bound), its metrics say ``optimality_pending``, and :meth:`Yardstick.finish`
runs the deferred solves after the episode -- the reference, the solo baselines, the adaptation
re-solve -- and gives the complete metrics. :meth:`Yardstick.deferred_reward` gives the part of
the last reward the stand-in withheld.

All of that state lives here, in one object the env holds (``env.yardstick``), behind explicit
calls: :meth:`lookup` answers a :class:`Reference` or :class:`Pending`; :meth:`finish` and
:meth:`deferred_reward` run what waited. The env keeps only its problem: the family's lookup
(``env._solve_reference()``), its provisional yardstick, its optimality and its final info.

The family's lookups learn that solves wait through :func:`~.references.deferring_solves`
and answer :class:`~.references.SolvePending` when they would need one; both stay inside this
module and ``references.py`` -- no env method sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from crab_gym.envs.realm.common.references import (
    NOT_APPLICABLE,
    Reference,
    SolvePending,
    deferring_solves,
    solves_deferred,
)
from crab_gym.evaluation.unfinished import SCORE_METRICS

ReferenceSolve = Literal["deferred", "inline"]


@dataclass(frozen=True)
class Pending:
    """A reference that waits for its solve (deferred to :meth:`Yardstick.finish`)."""

    what: str = "the reference"


class YardstickHost(Protocol):
    """What the yardstick asks of its env: the family's problem, nothing about solves."""

    instance: Any
    _cache: dict[str, Any]
    _terminated: bool
    #: Whether a disruption struck the episode (None: the env has no disruptions).
    adaptation_struck: Callable[[Any], bool] | None

    def _solve_reference(self) -> Reference: ...
    def _provisional_reference(self) -> Reference: ...
    def _optimality(self) -> float: ...
    def _optimality_reward(self, optimality: float) -> float: ...
    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]: ...
    def _solution(self) -> dict[str, Any]: ...


class Yardstick:
    """One env's reference and its deferred work (see the module docstring).

    Args:
        env: the env it measures (it calls only :class:`YardstickHost`'s members).
        mode: ``"deferred"`` (no solve inside ``step()``/``reset()``) or ``"inline"``.
        fixed: a reference value given to the env (``reference=``), else None.
    """

    def __init__(self, env: YardstickHost, mode: ReferenceSolve = "deferred", fixed: float | None = None) -> None:
        if mode not in ("deferred", "inline"):
            raise ValueError(f'reference_solve must be "deferred" or "inline", got {mode!r}')
        self.env = env
        self.mode: ReferenceSolve = mode
        self.fixed = None if fixed is None else float(fixed)
        self._reference: Reference | None = None
        self._pending = False  # no reference at hand without a solve: it waits
        self._solved = False  # the reference came from a solve or its cache (not shipped)
        self._finishing = False  # finish() is running the deferred solves now
        #: The finished episode's adaptation re-solve waits for :meth:`finish`.
        self.adaptation_deferred = False
        # the last reward's optimality where it was measured against a stand-in for a reference
        # that waited (else None), and the optimality measured once that reference is known:
        # their difference is the deferred reward
        self._waited: float | None = None
        self._settled: float | None = None

    # ------------------------------------------------------------------ the reference
    @property
    def defers(self) -> bool:
        """Whether a solve asked for now waits for :meth:`finish`."""
        return self.mode == "deferred" and not self._finishing

    def lookup(self, solve: bool) -> Reference | Pending:
        """The current instance's reference: kept, given, shipped or cheap; else solved now
        if ``solve`` (a solved reference never sets the reward: :meth:`terminal_optimality`),
        else :class:`Pending` (the lookup is not tried again until :meth:`forget`)."""
        if self._reference is not None:
            return self._reference
        if self.fixed is not None:
            self._keep(Reference.given(self.fixed), solved=False)
            return self._reference
        if self._pending and not solve:
            return Pending()
        try:
            with deferring_solves():
                found = self.env._solve_reference()
        except SolvePending:
            if not solve:
                self._pending = True
                return Pending()
            self._keep(self.env._solve_reference(), solved=True)
            return self._reference
        self._keep(found, solved=False)
        return found

    def _keep(self, reference: Reference, solved: bool) -> None:
        self._reference, self._pending, self._solved = reference, False, solved

    def current(self) -> Reference:
        """What ``env.reference`` is: the reference, or while it waits for its solve the
        family's provisional yardstick; where there is none while the episode's end is being
        scored, ``SolvePending`` (caught by :meth:`episode_end`): nothing is scored against a
        missing value."""
        found = self.lookup(solve=not self.defers)
        if isinstance(found, Reference):
            return found
        provisional = self.env._provisional_reference()
        if provisional.measure is None and solves_deferred():
            raise SolvePending(found.what)
        return provisional

    def solved(self) -> Reference:
        """The reference, solved now if it waits (a policy or a user who wants it first)."""
        self.lookup(solve=True)
        return self.current()

    def forget(self) -> None:
        """The instance (or the schedule it faces) changed: look the reference up again."""
        self._reference, self._pending, self._solved = None, False, False

    def fix(self, reference: Reference) -> None:
        """Use ``reference`` for the current instance (a test, or a probe that knows it)."""
        self._keep(reference, solved=False)

    def at_reset(self, shapes_episode: bool) -> None:
        """A new episode: nothing waits; an env whose reference shapes the episode (P7's
        sub-goals) has it looked up -- solved if need be -- now, and its reward may use it."""
        if shapes_episode and self._reference is None and self.fixed is None:
            self.lookup(solve=True)
            self._solved = False
        self.adaptation_deferred = False
        self._waited = self._settled = None

    def defer_adaptation(self, mode: str) -> bool:
        """Whether the adaptation re-solve waits for :meth:`finish` (``mode`` is the env's
        ``adaptation_reference``); marks the episode's adaptation pending if so."""
        if mode == "deferred" and not self._finishing:
            self.adaptation_deferred = True
            return True
        return False

    # ------------------------------------------------------------------ the episode's end
    def terminal_optimality(self) -> float:
        """The optimality term of the last reward: never a solve inside ``step()`` while solves
        are deferred, and the same return for the same plan whatever was solved or cached
        before (a reference a solve gave is not used). What a stand-in withheld,
        :meth:`deferred_reward` gives after the episode."""
        value, waited = self._step_time_optimality()
        self._waited, self._settled = (value if waited else None), None
        return value

    def _step_time_optimality(self) -> tuple[float, bool]:
        """``(optimality, whether it stood in for one against a reference that waits)``."""
        if not self.defers:
            return self.env._optimality(), False
        if self._reference is not None and self._solved:  # a solve outside step() gave it
            return self._measured_against(self.env._provisional_reference()), True
        try:
            with deferring_solves():
                value = self.env._optimality()
        except SolvePending:
            return 0.0, True
        return value, self._reference is None  # None: measured against the provisional yardstick

    def _measured_against(self, reference: Reference) -> float:
        """The env's optimality measured against ``reference`` (0 if it has no measure)."""
        if reference.measure is None:
            return 0.0
        kept = self._reference, self._pending, self._solved
        self._reference = reference
        try:
            return self.env._optimality()
        finally:
            self._reference, self._pending, self._solved = kept

    def episode_end(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The episode's ``(metrics, solution)`` without a solve inside ``step()``: what
        needs a solve that waits is None and ``optimality_pending`` says so."""
        if not self.defers:
            return self.env._final_info()
        try:
            with deferring_solves():
                metrics, solution = self.env._final_info()
        except SolvePending as waiting:  # a baseline (a solo plan ...) waits for its solve too
            self._pending = True
            # the adaptation of an episode a disruption struck is withheld too: it waits for
            # finish() (``adaptation`` None alone would read "does not apply")
            struck = self.env.adaptation_struck
            self.adaptation_deferred = struck is not None and struck(self.env)
            return {"optimality_pending": True, "waiting_for": waiting.what}, self.env._solution()
        if self._pending:
            metrics = {**metrics, "optimality": None, "coordination": None, "optimality_pending": True}
        return metrics, solution

    def complete(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """Every one of the REALM metrics (None: not applicable) and, in an env with
        disruptions, whether its adaptation re-solve is still pending."""
        out = {**{name: NOT_APPLICABLE for name in SCORE_METRICS}, **metrics}
        out["optimality_pending"] = bool(out.get("optimality_pending", False))
        if self.env.adaptation_struck is not None:
            out["adaptation_pending"] = self.adaptation_deferred
        return out

    # ------------------------------------------------------------------ after the episode
    def finish(self) -> dict[str, Any]:
        """Run the solves the finished episode deferred and return its complete metrics."""
        if not self.env._terminated:
            raise RuntimeError("finish_metrics() needs a finished episode: step until terminated first")
        self.adaptation_deferred = False
        with self._solving_deferred():
            self.current()  # looked up (solved) now, outside any deferral
            metrics, _ = self.env._final_info()
            self._settle()
        return self.complete(metrics)

    def deferred_reward(self) -> float:
        """The part of the finished episode's return its last reward withheld (0 when
        nothing waited, before the episode ends, and in a reward mode without the term)."""
        if not self.env._terminated or self._waited is None:
            return 0.0
        if self._settled is None:
            with self._solving_deferred():
                self._settle()
        assert self._settled is not None
        return self.env._optimality_reward(self._settled) - self.env._optimality_reward(self._waited)

    def _settle(self) -> None:
        """Measure the optimality the last reward stood in for, once per episode."""
        if self._waited is not None and self._settled is None:
            self._settled = float(self.env._optimality())

    @contextmanager
    def _solving_deferred(self) -> Iterator[None]:
        """Solves allowed; a reference that waited is looked up again; what the solves leave
        in the per-instance memo is dropped after, so that the next episodes' deferred
        lookups do not find it."""
        self._finishing = True
        if self._pending:
            self.forget()
        try:
            yield
        finally:
            self._finishing = False
            if self.mode == "deferred":
                self.env._cache.pop("per_instance", None)

    # ------------------------------------------------------------------ the per-instance memo
    def memo(self, name: str, compute: Callable[[], Any], *keys: Any) -> Any:
        """``compute()``, kept for the current instance and the same ``keys`` objects (by
        identity, e.g. the faced disruptions): for lookups an episode end or a reset repeats
        (references, one-vehicle baselines). While solves are deferred only a value found
        without a solve is reused (one found by a solve or in the cache is computed again, so
        that it waits as without the memo); an exception is never kept."""
        memo = self.env._cache.setdefault("per_instance", {})
        if memo.get("instance") is not self.env.instance:
            memo.clear()
            memo["instance"] = self.env.instance
        deferred = solves_deferred()
        hit = memo.get(name)
        if (hit is not None and (hit[2] or not deferred) and len(hit[0]) == len(keys)
                and all(a is b for a, b in zip(hit[0], keys))):
            return hit[1]
        value = compute()
        memo[name] = (keys, value, deferred)
        return value
