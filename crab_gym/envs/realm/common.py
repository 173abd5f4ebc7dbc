"""Small pieces the REALM envs share, so that P1, P2, P3/P4 and P11 behave alike.

* :class:`RenderModesMixin`: ``render()`` dispatches ``"ansi"`` / ``"rgb_array"``.
* :class:`InstanceSwapMixin`: ``reset(options={"instance": ...})`` swaps in another instance
  of the same shape, and a ``generator`` draws a fresh one on every reset.
* :class:`ReferenceMixin`: the reference value, given by the user or looked up / solved once
  per instance.
* :class:`PendingPlanMixin`: ``submit_plan`` validated in ``_check_action`` and carried out
  by the action, never leaking into the next step.
* :func:`goal_graph`, :func:`clock`, :func:`classical_mds`, :func:`draw_seed`: helpers.

The mixins go before ``CrabEnv`` in the bases; they only use the hooks they document.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx
import numpy as np

#: Clock bound of the P1/P2 observations (two days, in minutes).
DAY = 48 * 60

#: Oracle statuses whose value is a usable reference.
FEASIBLE_STATUSES = ("OPTIMAL", "FEASIBLE")


def clock(minute: float) -> str:
    """Minutes from midnight as ``HH:MM``."""
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


def draw_seed(rng: np.random.Generator) -> int:
    """A generator seed from the env's seeded ``np_random`` (so ``reset(seed=...)`` repeats)."""
    return int(rng.integers(0, 2**31 - 1))


class RenderModesMixin:
    """``render()`` for the two render modes of every REALM env.

    Subclasses implement ``_render_text() -> str`` (ansi) and ``_render_image() -> ndarray``
    (rgb_array); any other mode renders nothing.
    """

    render_mode: str | None

    def render(self) -> Any:
        if self.render_mode == "ansi":
            return self._render_text()
        if self.render_mode == "rgb_array":
            return self._render_image()
        return None

    def _render_text(self) -> str:
        raise NotImplementedError

    def _render_image(self) -> np.ndarray:
        raise NotImplementedError


class InstanceSwapMixin:
    """Switch instance at reset: ``options["instance"]`` first, else the env's generator.

    Subclasses set ``self._generator`` (None: no generator) and implement
    ``_load_instance(spec)``, ``_check_fits(inst)`` (raise ValueError if the instance does not
    fit the env's spaces), ``_draw_instance()`` (uses ``self.np_random``) and
    ``_use_instance(inst)``.
    """

    _generator: Any

    def _next_instance(self, options: dict[str, Any] | None) -> bool:
        """Use the instance the reset asks for, or a freshly drawn one; False if neither
        applies (the caller then restarts its current instance)."""
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

    def _load_instance(self, spec: Any) -> Any:
        raise NotImplementedError

    def _check_fits(self, inst: Any) -> None:
        raise NotImplementedError

    def _draw_instance(self) -> Any:
        raise NotImplementedError

    def _use_instance(self, inst: Any) -> None:
        raise NotImplementedError


class ReferenceMixin:
    """The reference of the current instance: ``reference=`` given to the env, else the
    oracle's record (shipped, cached or solved now), looked up once per instance.

    Subclasses set ``self._fixed_reference``, reset ``self._reference_record = None`` when
    the instance changes, and implement ``_solve_reference() -> dict`` (a record with
    ``value`` and ``status``).
    """

    _fixed_reference: float | None
    _reference_record: dict | None

    @property
    def reference_record(self) -> dict:
        """The reference record (shipped, cached or solved now) for the current instance."""
        if self._reference_record is None:
            if self._fixed_reference is not None:
                self._reference_record = {"value": self._fixed_reference, "status": "GIVEN", "source": "argument"}
            else:
                self._reference_record = self._solve_reference()
        return self._reference_record

    @property
    def reference(self) -> float | None:
        """The reference value (P1: travel minutes, P2: cost), or None if the oracle found
        no solution meeting every constraint."""
        rec = self.reference_record
        if rec["status"] in (*FEASIBLE_STATUSES, "GIVEN") and rec["value"] is not None:
            return float(rec["value"])
        return None

    def _solve_reference(self) -> dict:
        raise NotImplementedError


class PendingPlanMixin:
    """``_check_action`` stores a validated plan in ``self._pending`` for the action to carry
    out; ``step`` drops it afterwards (even if the step fails), so a stale plan never runs,
    and clears ``self._last_event`` before the step."""

    _pending: Any
    _last_event: str

    def step(self, action: Any) -> tuple:
        self._last_event = ""
        try:
            return super().step(action)  # type: ignore[misc]
        finally:
            self._pending = None
