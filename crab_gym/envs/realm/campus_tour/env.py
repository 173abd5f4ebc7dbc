"""Realm-P1-v0: the single-agent campus tour (REALM-Bench P1, a TSP with time windows).

Model (see :mod:`crab_gym.envs.realm.campus_tour.model` and ``docs/p1_p2.md``): leave the entrance when
it opens, visit every location no later than it closes (arriving early means waiting until
it opens), reach the end before it closes, and walk at most ``max_travel`` minutes in total.
Minimise the total travel minutes. Times are minutes from midnight.

Two ways to act:

* ``visit(location)`` walks to one location (RL; ``action_masks()`` marks the visits that
  keep the tour feasible as far as a shortest-path look-ahead can tell). Visiting the end
  location finishes the tour; locations not visited by then are missed.
* ``submit_plan(route)`` finishes the tour from a whole route in REALM's shape
  ``{"route": ["entrance", ..., "entrance"]}`` (LLM agents). The route must start with the
  locations walked so far and end at the end location; late arrivals and an exceeded travel
  budget are allowed and scored (constraint satisfaction, optimality 0).

At the end, ``info["solution"]`` holds ``{"route": [...]}`` plus the schedule, and
``info["metrics"]`` the REALM metrics: planning quality (share of locations visited in their
windows), optimality (reference / travel minutes, 0 if infeasible), constraint satisfaction
(share of declared constraints met: route shape, one window per location, return window,
travel budget).

This module does not use ``from __future__ import annotations``: the action signatures are
built inside a function with ``Literal``/``Annotated`` types that pydantic must resolve.
"""

import math
from pathlib import Path
from typing import Annotated, Any, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import Field

from crab_gym.core.action import Action
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.realm.campus_tour.formats import load_p1, shipped_p1_names
from crab_gym.envs.realm.campus_tour.generator import generate_p1
from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.campus_tour.references import reference_p1
from crab_gym.envs.realm.campus_tour.render import render_image, render_text
from crab_gym.envs.realm.campus_tour.sim import Tour
from crab_gym.envs.realm.common.env import (
    DAY,
    InstanceKind,
    InstanceSwapMixin,
    PendingPlanMixin,
    ReferenceMixin,
    RenderModesMixin,
    check_option_keys,
    checked_init,
    draw_seed,
    goal_graph,
)
from crab_gym.envs.realm.common.env import clock as _clock
from crab_gym.envs.realm.common.references import optimality_ratio

DEFAULT_INSTANCE = "p1_small_00"

#: What ``instance`` accepts (checked, and explained when wrong).
INSTANCE_KIND = InstanceKind(
    problem="P1",
    types=(P1Instance,),
    names=shipped_p1_names,
    list_all="crab_gym.datasets.list_instances('P1')",
    examples=("p1_small_00", "p1_medium_00", "p1_large_05"),
    files="a path to a JSON file (crab_gym's P1 format or an upstream REALM-Bench P1 file)",
)
#: Keys of a ``generator`` dict.
GENERATOR_KEYS = ("n_targets", "size")


def _make_actions(instance: P1Instance) -> list[Action]:
    """``visit`` over the targets plus the end; ``submit_plan`` over every location."""
    stops = tuple(instance.targets) + (instance.end,)
    Stop = Literal[stops]  # type: ignore[valid-type]
    Place = Literal[tuple(instance.locations)]  # type: ignore[valid-type]
    Route = Annotated[list[Place], Field(min_length=2, max_length=2 * instance.n + 2)]

    def visit(location: Stop, env: Any) -> None:
        """Walk from the current location to another one (waiting there if it is not open yet).
        Visiting the end location finishes the tour.

        Args:
            location: the location to walk to next.
        """
        env._visit(env.instance.index[location])

    def submit_plan(route: Route, env: Any) -> None:
        """Finish the tour with a whole route, from the start location to the end location,
        each other location listed once. The route must begin with the locations already
        walked (just the start at the beginning of an episode).

        Args:
            route: location names in visiting order, start first and end last.
        """
        env._apply_plan()

    return [
        Action.from_function(visit, env_name="realm-p1"),
        Action.from_function(submit_plan, env_name="realm-p1"),
    ]


@evaluator(name="tour_complete")
def _tour_complete(env: Any) -> bool:
    """Back at the end location, every location visited in its window, travel within budget."""
    return env.tour.feasible


def _visited_evaluator(index: int, name: str) -> Evaluator:
    @evaluator(name=f"visited_{name}")
    def check(env: Any) -> bool:
        return bool(env.tour.on_time[index])

    check.description = f"{name} is visited inside its opening window"
    return check


class CampusTourEnv(RenderModesMixin, InstanceSwapMixin, ReferenceMixin, PendingPlanMixin, CrabEnv):
    """REALM P1 campus tour by single visits (RL) or whole routes (LLM agents).

    Args:
        instance: a shipped instance name (``"p1_small_00"`` ... ``"p1_large_05"``), a path to
            a JSON file (crab_gym's P1 format or an upstream REALM-Bench P1 file), a mapping,
            or a :class:`~crab_gym.envs.realm.campus_tour.model.P1Instance`.
        generator: draw a fresh instance on every reset (seeded by ``reset(seed=...)``):
            an int ``n_targets`` or ``{"n_targets": k, "size": "small"}``. Overrides
            ``instance``. References of drawn instances are solved at the end of an episode
            and cached on disk.
        reference: a known reference value (travel minutes) to use instead of the shipped,
            cached or solved one.
        render_mode: ``"ansi"`` or ``"rgb_array"``.
        invalid_action_penalty, progress_weight, optimality_weight: see ``CrabEnv``.
    """

    @checked_init
    def __init__(
        self,
        instance: str | Path | dict | P1Instance = DEFAULT_INSTANCE,
        *,
        generator: int | dict | None = None,
        reference: float | None = None,
        render_mode: str | None = None,
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
    ) -> None:
        self._generator = _generator_options(generator)
        if self._generator is not None:
            inst = generate_p1(self._generator["size"], 0, n_targets=self._generator["n_targets"])
        else:
            inst = INSTANCE_KIND.load(instance, load_p1)
        self._fixed_reference = reference
        super().__init__(
            _make_actions(inst),
            render_mode=render_mode,
            invalid_action_penalty=invalid_action_penalty,
            progress_weight=progress_weight,
            optimality_weight=optimality_weight,
        )
        n = inst.n
        self._stops = [inst.index[x] for x in (*inst.targets, inst.end)]
        self._max_leg = float(max(1, max(max(row) for row in inst.travel)))
        if self._generator is not None:
            self._max_leg = max(self._max_leg, 200.0)  # drawn campuses stay well below this
        self._walk_bound = self._max_leg * (2 * n + 2)
        self.observation_space = spaces.Dict(
            {
                "location": spaces.Discrete(n),
                "clock": spaces.Box(0.0, float(DAY), (1,), np.float32),
                "walked": spaces.Box(0.0, self._walk_bound, (1,), np.float32),
                "travel_left": spaces.Box(0.0, self._walk_bound, (1,), np.float32),
                "visited": spaces.MultiBinary(n),
                "windows": spaces.Box(0.0, float(DAY), (n, 2), np.float32),
                "travel": spaces.Box(0.0, self._max_leg, (n, n), np.float32),
                "action_mask": spaces.MultiBinary(self.codec.n_flat),
            }
        )
        self._use_instance(inst)
        self._pending: list[int] | None = None
        self._last_event: str = ""

    # ================================================================== instance
    def _use_instance(self, inst: P1Instance) -> None:
        self.instance = inst
        self.tour = Tour(inst)
        self._reference_record: dict | None = None
        self._obs_windows = np.clip(np.asarray(inst.windows, dtype=np.float32), 0, DAY)
        self._obs_travel = np.clip(np.asarray(inst.travel, dtype=np.float32), 0, self._max_leg)
        self._evaluators = [
            _visited_evaluator(inst.index[loc], loc) for loc in inst.targets
        ]

    def _check_fits(self, inst: P1Instance) -> None:
        cur = self.instance
        if (inst.locations, inst.start, inst.end) != (cur.locations, cur.start, cur.end):
            raise ValueError(
                f"instance {inst.name} has other locations than this env's ({cur.name}); "
                "make a new env for it"
            )

    def _load_instance(self, spec: Any) -> P1Instance:
        return INSTANCE_KIND.load(spec, load_p1)

    def _draw_instance(self) -> P1Instance:
        g, seed = self._generator, draw_seed(self.np_random)
        return generate_p1(g["size"], seed, name=f"p1_generated_{seed}", n_targets=g["n_targets"])

    def _solve_reference(self) -> dict:
        return reference_p1(self.instance)

    # ================================================================== CrabEnv hooks
    def _reset_state(self, options: dict[str, Any] | None) -> None:
        if not self._next_instance(options):
            self.tour.reset()
        self._pending = None
        self._last_event = ""

    def _build_graph(self) -> nx.DiGraph:
        return goal_graph(_tour_complete, self._evaluators)

    def _get_obs(self) -> dict[str, Any]:
        t = self.tour
        left = (t.budget if math.isfinite(t.budget) else self._walk_bound) - t.walked
        return {
            "location": int(t.pos),
            "clock": np.array([min(t.clock, DAY)], dtype=np.float32),
            "walked": np.array([min(t.walked, self._walk_bound)], dtype=np.float32),
            "travel_left": np.array([min(max(left, 0.0), self._walk_bound)], dtype=np.float32),
            "visited": t.visited.astype(np.int8),
            "windows": self._obs_windows.copy(),
            "travel": self._obs_travel.copy(),
            "action_mask": self._action_mask().astype(np.int8),
        }

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        if name == "visit":
            return self.tour.why_not(self.instance.index[args["location"]])
        reason, suffix = self._check_plan(args["route"])
        if reason is None:
            self._pending = suffix
        return reason

    def _check_plan(self, route: list[str]) -> tuple[str | None, list[int]]:
        inst, t = self.instance, self.tour
        idx = [inst.index[x] for x in route]
        done = len(t.route)
        if idx[:done] != t.route:
            walked = [inst.locations[i] for i in t.route]
            return f"the route must begin with the locations walked so far: {walked}", []
        if idx[-1] != t.e:
            return f"the route must end at {inst.end}", []
        middle = idx[1:-1]
        if t.s in middle or t.e in middle:
            return f"{inst.start}/{inst.end} may only open and close the route", []
        seen: set[int] = set()
        for i in middle:
            if i in seen:
                return f"{inst.locations[i]} is listed twice", []
            seen.add(i)
        if len(idx) <= done:
            return "the route adds nothing to the walk so far", []
        return None, idx[done:]

    def _is_terminated(self) -> bool:
        return self.tour.done

    def _optimality(self) -> float:
        return optimality_ratio(self.reference, self.tour.walked, self.tour.feasible)

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        t, inst = self.tour, self.instance
        n_targets = int(t.target_mask.sum())
        met = 1 + t.targets_on_time + int(t.on_time[t.e])  # route shape holds by construction
        total = 2 + n_targets
        if inst.max_travel is not None:
            met += int(t.walked <= inst.max_travel)
            total += 1
        rec = self.reference_record
        metrics = {
            "planning_quality": t.targets_on_time / n_targets if n_targets else 1.0,
            "optimality": self._optimality(),
            "constraint_satisfaction": met / total,
            "feasible": t.feasible,
            "travel_minutes": int(t.walked),
            "tour_minutes": int(t.arrivals[-1] - inst.departure),
            "reference": rec["value"],
            "reference_status": rec["status"],
        }
        names = inst.locations
        solution = {
            "route": [names[i] for i in t.route],
            "schedule": [
                {"location": names[i], "arrival": int(a), "start": int(b)}
                for i, a, b in zip(t.route, t.arrivals, t.starts)
            ],
            "total_travel_time": int(t.walked),
        }
        return metrics, solution

    def _action_mask(self) -> np.ndarray:
        if self.tour.done:
            return np.zeros(self.codec.n_flat, dtype=bool)
        mask = np.zeros(self.codec.n_flat, dtype=bool)
        for k, j in enumerate(self._stops):
            mask[k] = self.tour.why_not(j) is None
        return mask

    def _extra_info(self) -> dict[str, Any]:
        t = self.tour
        return {
            "location": self.instance.locations[t.pos],
            "clock": int(t.clock),
            "travel_minutes": int(t.walked),
            "event": self._last_event,
        }

    # ================================================================== action entries
    def _visit(self, j: int) -> None:
        t = self.tour
        t.move(j)
        name = self.instance.locations[j]
        wait = t.starts[-1] - t.arrivals[-1]
        self._last_event = f"arrived at {name} at {_clock(t.arrivals[-1])}" + (
            f", waited {wait} min" if wait else ""
        )

    def _apply_plan(self) -> None:
        suffix, self._pending = self._pending, None
        if suffix is None:
            raise RuntimeError("submit_plan runs through env.step(), which validates the route first")
        for j in suffix:
            self.tour.move(j)
        self._last_event = f"route of {len(suffix)} more stops submitted"

    def submit_plan(self, plan: dict) -> tuple:
        """Convenience: ``env.step`` with a ``submit_plan`` tool call for ``{"route": [...]}``."""
        return self.step({"name": "submit_plan", "arguments": {"route": list(plan["route"])}})

    # ================================================================== rendering
    def _render_text(self) -> str:
        return render_text(self.instance, self.tour)

    def _render_image(self) -> np.ndarray:
        return render_image(self.instance, self.tour)


def _generator_options(generator: Any) -> dict[str, Any] | None:
    if generator is None:
        return None
    if isinstance(generator, dict):
        check_option_keys("generator option", generator, GENERATOR_KEYS)
        opts = {"size": "small", **generator}
    elif isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        opts = {"size": "small", "n_targets": int(generator)}
    else:
        raise TypeError(
            'generator must be the number of targets (an int) or a dict like {"n_targets": 5, "size": "small"} '
            f"(keys: {', '.join(GENERATOR_KEYS)}); got {type(generator).__name__} {generator!r}"
        )
    if "n_targets" not in opts or int(opts["n_targets"]) < 1:
        raise ValueError(f"generator needs n_targets >= 1, got {opts}")
    opts["n_targets"] = int(opts["n_targets"])
    return opts
