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
from crab_gym.envs.canvas import Canvas, LabelPlacer, abbreviate
from crab_gym.envs.realm.campus_tour.model import P1Instance, generate_p1, load_p1, shipped_p1_names
from crab_gym.envs.realm.common.env import (
    DAY,
    InstanceKind,
    InstanceSwapMixin,
    PendingPlanMixin,
    ReferenceMixin,
    RenderModesMixin,
    check_option_keys,
    checked_init,
    classical_mds,
    draw_seed,
    goal_graph,
)
from crab_gym.envs.realm.common.env import clock as _clock

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


def _shortest_paths(travel: np.ndarray) -> np.ndarray:
    """All-pairs shortest walking times (Floyd-Warshall): a lower bound on any continuation."""
    dist = travel.astype(np.int64).copy()
    for k in range(dist.shape[0]):
        dist = np.minimum(dist, dist[:, k : k + 1] + dist[k : k + 1, :])
    return dist


class _Tour:
    """The walk so far: position, clock, travel and the arrival at every stop."""

    def __init__(self, inst: P1Instance) -> None:
        self.inst = inst
        self.travel = np.asarray(inst.travel, dtype=np.int64)
        self.sp = _shortest_paths(self.travel)
        self.open = np.array([w[0] for w in inst.windows], dtype=np.int64)
        self.close = np.array([w[1] for w in inst.windows], dtype=np.int64)
        self.s, self.e = inst.index[inst.start], inst.index[inst.end]
        self.budget = inst.max_travel if inst.max_travel is not None else math.inf
        self.target_mask = np.ones(inst.n, dtype=bool)
        self.target_mask[[self.s, self.e]] = False
        self.reset()

    def reset(self) -> None:
        self.pos = self.s
        self.clock = int(self.inst.departure)
        self.walked = 0
        self.route = [self.s]
        self.arrivals = [self.clock]
        self.starts = [self.clock]
        self.visited = np.zeros(self.inst.n, dtype=bool)
        self.visited[self.s] = True
        self.on_time = np.zeros(self.inst.n, dtype=bool)
        self.done = False

    def why_not(self, j: int) -> str | None:
        """Why walking to ``j`` now is masked (None: allowed)."""
        name = self.inst.locations[j]
        if j == self.e:
            return None
        if self.visited[j]:
            return f"{name} was already visited"
        arrive = self.clock + int(self.travel[self.pos, j])
        if arrive > self.close[j]:
            return f"you would arrive at {name} at {_clock(arrive)}, after it closes at {_clock(self.close[j])}"
        begin = max(arrive, int(self.open[j]))
        if begin + self.sp[j, self.e] > self.close[self.e]:
            return f"after {name} the tour could not reach {self.inst.end} before it closes"
        if self.walked + self.travel[self.pos, j] + self.sp[j, self.e] > self.budget:
            return f"via {name} the tour would exceed the travel budget of {self.inst.max_travel} minutes"
        return None

    def move(self, j: int) -> None:
        """Walk to ``j`` (no checks: a submitted plan may break windows and is scored)."""
        leg = int(self.travel[self.pos, j])
        arrive = self.clock + leg
        self.walked += leg
        begin = arrive if j == self.e else max(arrive, int(self.open[j]))
        if not self.visited[j] or j == self.e:
            self.on_time[j] = arrive <= self.close[j]
        self.visited[j] = True
        self.pos, self.clock = j, begin
        self.route.append(j)
        self.arrivals.append(arrive)
        self.starts.append(begin)
        if j == self.e:
            self.done = True

    @property
    def targets_on_time(self) -> int:
        return int((self.on_time & self.target_mask).sum())

    @property
    def feasible(self) -> bool:
        n_targets = int(self.target_mask.sum())
        return (
            self.done
            and self.targets_on_time == n_targets
            and bool(self.on_time[self.e])
            and self.walked <= self.budget
        )


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

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

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
        self.tour = _Tour(inst)
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
        from crab_gym.envs.realm.group_tours.references import reference_p1

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
        t = self.tour
        if not t.feasible:
            return 0.0
        ref = self.reference
        if ref is None or t.walked <= 0 or t.walked <= ref:
            return 1.0
        return ref / t.walked

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
        t, inst = self.tour, self.instance
        names = inst.locations
        budget = "no limit" if inst.max_travel is None else f"{inst.max_travel}"
        lines = [
            f"{inst.name}: {len(inst.targets)} locations | at {names[t.pos]} {_clock(t.clock)} | "
            f"walked {t.walked}/{budget} min | on time {t.targets_on_time}/{len(inst.targets)}"
        ]
        legs = [f"{names[i]}@{_clock(a)}" for i, a in zip(t.route, t.arrivals)]
        lines.append("route: " + " -> ".join(legs))
        todo = [
            f"{names[j]} [{_clock(inst.windows[j][0])}-{_clock(inst.windows[j][1])}]"
            for j in range(inst.n)
            if t.target_mask[j] and not t.visited[j]
        ]
        lines.append("to visit: " + (", ".join(todo) if todo else "none"))
        return "\n".join(lines) + "\n"

    def _positions(self) -> np.ndarray:
        inst = self.instance
        if inst.coords is not None:
            return np.asarray(inst.coords, dtype=np.float64)
        return classical_mds(inst.travel)

    def _render_image(self) -> np.ndarray:
        t, inst = self.tour, self.instance
        width, height, pad, head, strip = 640, 480, 30, 30, 50
        ink, bg = (30, 30, 30), (236, 244, 230)
        canvas = Canvas(width, height, background=bg)
        grey, green, orange, blue = (150, 150, 150), (0, 158, 115), (213, 94, 0), (0, 90, 200)
        xy = self._positions()
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        span = np.maximum(hi - lo, 1e-9)
        scale = min((width - 2 * pad - 60) / span[0], (height - head - strip - 2 * pad) / span[1])
        px = pad + 30 + (xy - lo) * scale
        px[:, 1] = height - strip - pad - (xy[:, 1] - lo[1]) * scale  # north up
        for a, b in zip(t.route, t.route[1:]):
            canvas.line(px[a, 0], px[a, 1], px[b, 0], px[b, 1], blue, width=3)
        labels = LabelPlacer(canvas)
        for j in range(inst.n):
            x, y = px[j]
            labels.block(x - 7, y - 7, x + 8, y + 8)
            if j in (t.s, t.e):
                canvas.rect(x - 7, y - 7, x + 8, y + 8, ink)
                continue
            if not t.visited[j]:
                fill = grey
            else:
                fill = green if t.on_time[j] else orange
            canvas.disc(x, y, 6, fill)
        x, y = px[t.pos]
        canvas.outline(x - 10, y - 10, x + 10, y + 10, (200, 0, 0))
        for j in range(inst.n):  # names beside the marks, on a background patch over lines
            labels.place(px[j, 0], px[j, 1], abbreviate(inst.locations[j], 11), ink if t.visited[j] else (90, 90, 90),
                         gap=10, background=bg)
        # header: the state in words, then a key to the marks
        n_targets = int(t.target_mask.sum())
        budget = f"/{inst.max_travel}" if inst.max_travel is not None else ""
        canvas.text(6, 4, f"clock {_clock(t.clock)}  walked {t.walked}{budget} min  "
                          f"visited {int((t.visited & t.target_mask).sum())}/{n_targets}  on time {t.targets_on_time}", ink)
        kx, ky = 6, 17
        for mark, name in (("square", "start/end"), (green, "on time"), (orange, "late"), (grey, "not yet"),
                           ("here", "here"), ("route", "route")):
            if mark == "square":
                canvas.rect(kx, ky, kx + 7, ky + 7, ink)
            elif mark == "here":
                canvas.outline(kx - 1, ky - 1, kx + 8, ky + 8, (200, 0, 0))
            elif mark == "route":
                canvas.line(kx - 2, ky + 3, kx + 9, ky + 3, blue, width=3)
            else:
                canvas.disc(kx + 3, ky + 3, 4, mark)
            canvas.text(kx + 12, ky, name, ink)
            kx += 12 + canvas.text_width(name) + 14
        canvas.line(0, head - 2, width, head - 2, (200, 210, 195))
        # bottom strip: the day from departure to closing (clock so far), the walking budget used
        left, right = pad + 34, width - pad - 36
        y0 = height - strip + 10
        day0, day1 = inst.departure, max(inst.windows[t.e][1], inst.departure + 1)
        canvas.text(6, y0 + 4, f"day {_clock(day0)}", ink)
        canvas.rect(left, y0, right, y0 + 14, (210, 210, 210))
        frac = min(max((t.clock - day0) / (day1 - day0), 0.0), 1.0)
        canvas.rect(left, y0, left + frac * (right - left), y0 + 14, (0, 114, 178))
        now = f"now {_clock(t.clock)}"
        x_now = left + frac * (right - left)
        if frac * (right - left) > canvas.text_width(now) + 6:  # inside the filled part, else after it
            canvas.text(x_now - 3 - canvas.text_width(now), y0 + 4, now, (255, 255, 255))
        else:
            canvas.text(x_now + 3, y0 + 4, now, ink)
        canvas.text(right + 4, y0 + 4, _clock(day1), ink)
        y1 = y0 + 20
        canvas.text(6, y1 + 2, "WALK", ink)
        if inst.max_travel:
            used = min(t.walked / inst.max_travel, 1.0)
            canvas.rect(left, y1 + 1, right, y1 + 10, (225, 225, 215))
            canvas.rect(left, y1 + 1, left + used * (right - left), y1 + 10, (230, 159, 0))
            canvas.text(right + 4, y1 + 2, f"max {inst.max_travel}", ink)
            walked = f"{t.walked} min"
            x_used = left + used * (right - left)
            if used * (right - left) > canvas.text_width(walked) + 6:
                canvas.text(x_used - 3 - canvas.text_width(walked), y1 + 2, walked, ink)
            else:
                canvas.text(x_used + 3, y1 + 2, walked, ink)
        else:
            canvas.text(left, y1 + 2, f"{t.walked} min walked, no limit", ink)
        return canvas.image()


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
