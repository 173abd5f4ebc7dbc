"""Realm-P1-v0: the single-agent campus tour (REALM-Bench P1, a TSP with time windows), as
the Gymnasium env :class:`CampusTourEnv`; its docstring is the env's reference (model, spaces,
reward, episode end, arguments).

This module does not use ``from __future__ import annotations``: the action signatures are
built inside a function with ``Literal``/``Annotated`` types that pydantic must resolve.
"""

import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import Field

from crab_gym.core.action import Action
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.realm.campus_tour.checker import check
from crab_gym.envs.realm.campus_tour.formats import FILES, load_p1
from crab_gym.envs.realm.campus_tour.generator import generate_p1
from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.campus_tour.references import reference_p1
from crab_gym.envs.realm.campus_tour.render import VIEWER
from crab_gym.envs.realm.campus_tour.sim import Tour
from crab_gym.envs.realm.common.env import DAY, RealmEnv, checked_init, goal_graph, hhmm
from crab_gym.envs.realm.common.instance_source import InstanceSource, SizedGenerator, files_kind
from crab_gym.envs.realm.common.keywords import realm_keywords

DEFAULT_INSTANCE = "p1_small_00"

#: The ``instance`` and ``generator`` arguments: shipped or own files, or drawn campuses.
SOURCE = InstanceSource(files_kind(FILES), load_p1, SizedGenerator(generate_p1, {"n_targets": 5}, "p1", shorthand="targets"),
                        DEFAULT_INSTANCE)


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

    return [Action.from_function(entry, env_name="realm-p1") for entry in (visit, submit_plan)]


@evaluator(name="tour_complete")
def _tour_complete(env: Any) -> bool:
    """Back at the end location, every location visited in its window, travel within budget."""
    return env.tour.feasible


def _visited_evaluator(index: int, name: str) -> Evaluator:
    """The sub-goal of one target: reached inside its opening window."""
    return evaluator(
        lambda env: env.tour.on_time[index],
        name=f"visited_{name}",
        description=f"{name} is visited inside its opening window",
    )


class CampusTourEnv(RealmEnv):
    """Walk one visitor from the campus entrance through every location inside its opening
    hours and back, with as few minutes of walking as possible (REALM-Bench P1).

    ## Description

    REALM-Bench P1 is a travelling-salesman tour with time windows; ``docs/campus_tour.md`` tells
    the model at length, :mod:`crab_gym.envs.realm.campus_tour.model` holds the instance type.
    Times are integer minutes, clock times minutes from midnight.

    | part | model |
    |---|---|
    | decision | the order of the walk from `start` through every other location (a *target*) to `end` |
    | constraints | leave `start` when it opens; reach each target no later than it closes (arriving early means waiting until it opens); reach `end` before it closes; walk at most `max_travel` minutes in all (waiting does not count) |
    | objective | minimise the total travel minutes (the sum of the legs walked) |

    An RL agent walks one location at a time; an LLM agent may submit the whole route in
    REALM's solution shape. Late arrivals and an exceeded budget are accepted from a
    submitted route and scored (the tour is then infeasible).

    ## Action Space

    A `OneOf` over one `Dict` of arguments per action; `env.step` takes an element of it or a
    tool call `{"name": ..., "arguments": {...}}` (`env.unwrapped.tools()` lists the tools).
    `n` is the number of locations, `start` included.

    | action | arguments | space | effect |
    |---|---|---|---|
    | `visit` | `location`: a target or `end` | `Dict(location=Discrete(n_targets + 1))` | walk there, waiting if it is not open yet; visiting `end` finishes the tour, missing the targets not yet visited |
    | `submit_plan` | `route`: location names, `start` first, `end` last, each target at most once | `Dict(route=Sequence(Discrete(n)))` | finish the tour with the whole route, which must begin with the locations walked so far |

    `action_masks()` (also `obs["action_mask"]`: the targets in order, then `end`) allows a
    target when it is unvisited, reached before it closes, and a shortest-path look-ahead
    says the walk can still reach `end` in time and within the budget; `end` is always
    allowed. `env.unwrapped.submit_plan({"route": [...]})` is a shortcut for the tool call.

    ## Observation Space

    A `Dict`; `L` is the longest leg (at least 200 with a `generator`), `W = L * (2n + 2)`.

    | key | space | meaning |
    |---|---|---|
    | `location` | `Discrete(n)` | where the visitor is (index into `instance.locations`) |
    | `clock` | `Box(0, 2880, (1,))` | the current minute from midnight |
    | `walked` | `Box(0, W, (1,))` | travel minutes so far |
    | `travel_left` | `Box(0, W, (1,))` | travel budget left (`W` minus `walked` without a budget) |
    | `visited` | `MultiBinary(n)` | the locations visited |
    | `windows` | `Box(0, 2880, (n, 2))` | opening and closing minute of every location |
    | `travel` | `Box(0, L, (n, n))` | walking minutes from each location to each other (asymmetric) |
    | `action_mask` | `MultiBinary(n_targets + 1)` | the `visit`s allowed now |

    ## Rewards

    A valid step earns `progress_weight` x the rise of the sub-goal completeness (sub-goals:
    each target reached inside its window, then `tour_complete`: back at `end` in time,
    every target on time, within the budget). The last step adds `optimality_weight` x
    optimality, `min(1, reference / travel minutes)` for a feasible tour and 0 otherwise. With
    the default weights a return lies in [0, 1]; 1 is a feasible tour walking no more than
    the reference. An invalid action (masked, malformed, outside the action space) changes
    nothing, earns `-invalid_action_penalty` and says why in `info["error"]`.

    ## Starting State

    The visitor stands at `start` at its opening minute, nothing walked. `reset(seed=...)`
    restarts the current instance; `reset(options={"instance": ...})` switches to another
    instance with the same locations; with a `generator`, every reset draws a fresh campus
    seeded by `reset(seed=...)`.

    ## Episode End

    The episode terminates when the walk reaches `end` (a `visit` of `end` or a
    `submit_plan`); it is never truncated. `info` always holds `location`, `clock`,
    `travel_minutes` and `event` besides the common keys. At the end, `info["metrics"]` holds
    `planning_quality` (share of targets visited on time), `optimality`,
    `constraint_satisfaction` (share of the declared constraints met: route shape, one
    window per target, the return window, the budget), `feasible`, `travel_minutes`,
    `tour_minutes` (waiting included), `reference` and `reference_status`; `info["solution"]`
    holds `{"route": [...], "schedule": [{"location", "arrival", "start"}], "total_travel_time"}`.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | `instance` | `"p1_small_00"` | a shipped name (`p1_small_00` ... `p1_large_05`; all: `crab_gym.datasets.list_instances("P1")`), a path to a JSON file (crab_gym's P1 format or an upstream REALM-Bench P1 file), a mapping, or a `P1Instance` |
    | `generator` | `None` | draw a fresh instance on every reset: an int `n_targets`, or `{"n_targets": k, "size": "small"}`; overrides `instance`. A drawn instance's reference is solved when first needed (at the end of its first episode) and cached on disk; or your own callable `generator(rng) -> instance` (as in Jumanji), whose draws must fit the env's spaces |
    | `reference` | `None` | a known reference value (travel minutes) instead of the shipped, cached or solved one |
    | `reference_solve` | `"deferred"` | `"deferred"`: an instance nobody shipped (generated, your file, a schedule changed by an injected disruption) is not solved inside `step()`; `finish_metrics()` solves it after the episode (the evaluation runner calls it; until then the metrics say `optimality_pending` and the last reward's optimality term is 0: `deferred_reward()` gives that term after the episode, and the runner adds it to the return); `"inline"`: solved inside the last `step()` |
    | `render_mode` | `None` | `"ansi"` (text) or `"rgb_array"` (a map of the campus and the walk) |
    | `invalid_action_penalty`, `progress_weight`, `optimality_weight` | `0.0`, `0.5`, `0.5` | the reward weights (see Rewards) |

    `env.unwrapped.reference` is the current instance's
    :class:`~crab_gym.envs.realm.common.references.Reference`: value, status, solver and the
    oracle's route as `submit_plan` arguments (`{"route": [...]}`).

    ## Version History

    * v0: initial version. Later, still v0 (dynamics and scores unchanged):
      `env.unwrapped.reference` became a `Reference` record (it was the value, a float, with
      the record as the dict `reference_record`).
    """

    instance_source = SOURCE
    viewer = VIEWER
    checker = staticmethod(check)
    reference_lookup = staticmethod(reference_p1)

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | P1Instance = DEFAULT_INSTANCE, *, generator: int | dict | Callable[..., Any] | None = None,
        **options: Any,
    ) -> None:
        self._generator, inst = self.instance_source.start(instance, generator)
        super().__init__(_make_actions(inst), **options)  # reference, render_mode and the reward weights
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

    # ================================================================== RealmEnv hooks
    def _check_fits(self, inst: P1Instance) -> None:
        cur = self.instance
        if (inst.locations, inst.start, inst.end) != (cur.locations, cur.start, cur.end):
            raise ValueError(
                f"instance {inst.name} has other locations than this env's ({cur.name}); "
                "make a new env for it"
            )

    def _use_instance(self, inst: P1Instance) -> None:
        self.instance = inst
        self.tour = Tour(inst)
        self._obs_windows = np.clip(np.asarray(inst.windows, dtype=np.float32), 0, DAY)
        self._obs_travel = np.clip(np.asarray(inst.travel, dtype=np.float32), 0, self._max_leg)
        self._evaluators = [_visited_evaluator(inst.index[loc], loc) for loc in inst.targets]

    def _restart(self) -> None:
        self.tour.reset()

    def _agent_cost(self) -> float:
        return self.tour.walked

    def _plan_feasible(self) -> bool:
        return self.tour.feasible

    # ================================================================== CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        return self._instance_graph(lambda: goal_graph(_tour_complete, self._evaluators))

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
            "action_mask": self._current_mask().astype(np.int8),
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

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        t, inst = self.tour, self.instance
        n_targets = int(t.target_mask.sum())
        met = 1 + t.targets_on_time + int(t.on_time[t.e])  # route shape holds by construction
        total = 2 + n_targets
        if inst.max_travel is not None:
            met += int(t.walked <= inst.max_travel)
            total += 1
        ref = self.reference
        metrics = {
            "planning_quality": t.targets_on_time / n_targets if n_targets else 1.0,
            "optimality": self._optimality(),
            "constraint_satisfaction": met / total,
            "feasible": t.feasible,
            "travel_minutes": int(t.walked),
            "tour_minutes": int(t.arrivals[-1] - inst.departure),
            "reference": ref.value,
            "reference_status": ref.status,
        }
        return metrics, self._solution()

    def _solution(self) -> dict[str, Any]:
        """The route walked, with its schedule (needs no reference)."""
        t, names = self.tour, self.instance.locations
        return {
            "route": [names[i] for i in t.route],
            "schedule": [
                {"location": names[i], "arrival": int(a), "start": int(b)}
                for i, a, b in zip(t.route, t.arrivals, t.starts)
            ],
            "total_travel_time": int(t.walked),
        }

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
        self._last_event = f"arrived at {name} at {hhmm(t.arrivals[-1])}" + (
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

