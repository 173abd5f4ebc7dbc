"""Realm-P2-v0: multi-group campus tours (REALM-Bench P2) as a Gymnasium env.

Model (see :mod:`crab_gym.envs.realm.group_tours.model` and ``docs/p1_p2.md``): give every visitor group
a tour guide and a start minute. A tour starts no earlier than its group arrives, lasts
``tour_duration`` minutes inside the guide's availability, fits the guide's and the campus's
group-size caps, and a guide leads one tour at a time. Minimise the total waiting beyond the
preferred starts plus ``balance_weight`` x (max - min tours per guide). Times are minutes
from midnight.

Two ways to act:

* ``assign(group, guide)`` gives the group to the guide at the earliest minute the guide is
  free for a whole tour, no earlier than the group's arrival (RL; ``action_masks()`` marks
  the pairs where such a minute exists). Assigning groups to a guide in the order of an
  optimal plan reproduces it, so every optimum is reachable.
* ``submit_plan(assignments)`` finishes the episode from a whole plan in REALM's shape
  ``{"assignments": {"guide1": [{"group": "group1", "start": 600}, ...], ...}}`` (LLM agents).
  Groups already assigned must keep their guide and start; a group may be listed once.
  Breaking a constraint is allowed and scored.

The episode ends when every group has a guide, or when no assignment is possible any more.
``info["metrics"]``: planning quality (share of groups served validly), optimality
(reference cost / cost, 0 if infeasible), constraint satisfaction (share of the per-group
and per-guide constraints met) and coordination (each guide is an agent: share of guides
usefully busy, out of those that could be).

This module does not use ``from __future__ import annotations``: the action signatures are
built inside a function with ``Literal``/``Annotated`` types that pydantic must resolve.
"""

import warnings
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field, create_model

from crab_gym.core.action import Action
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.canvas import Canvas, colour, ink_on, short_id
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
from crab_gym.envs.realm.group_tours.model import P2Instance, generate_p2, load_p2, shipped_p2_names

DEFAULT_INSTANCE = "p2_small_00"

#: What ``instance`` accepts (checked, and explained when wrong).
INSTANCE_KIND = InstanceKind(
    problem="P2",
    types=(P2Instance,),
    names=shipped_p2_names,
    list_all="crab_gym.datasets.list_instances('P2')",
    examples=("p2_small_00", "p2_medium_00", "p2_large_05"),
    files="a path to a JSON file (crab_gym's P2 format or an upstream REALM-Bench P2 file)",
)
#: Keys of the ``generator`` dict.
GENERATOR_KEYS = ("n_groups", "n_guides", "size")


def _plan_model(instance: P2Instance) -> type[BaseModel]:
    """``{guide_id: [{"group", "start"}, ...]}`` as a strict model with one field per guide."""
    Group = Literal[tuple(instance.group_ids)]  # type: ignore[valid-type]
    tour = create_model(
        "Tour",
        __config__=ConfigDict(extra="forbid"),
        group=(Group, Field(description="group id")),
        start=(int, Field(ge=0, le=DAY, description="start minute (from midnight)")),
    )
    fields = {
        gid: (
            list[tour],  # type: ignore[valid-type]
            Field(default_factory=list, max_length=len(instance.groups), description=f"tours of {gid}"),
        )
        for gid in instance.guide_ids
    }
    with warnings.catch_warnings():  # an id like "copy" shadows a BaseModel attribute: harmless here
        warnings.simplefilter("ignore")
        return create_model("Assignments", __config__=ConfigDict(extra="forbid"), **fields)


def _make_actions(instance: P2Instance) -> list[Action]:
    GroupId = Literal[tuple(instance.group_ids)]  # type: ignore[valid-type]
    GuideId = Literal[tuple(instance.guide_ids)]  # type: ignore[valid-type]
    Plan = _plan_model(instance)

    def assign(group: GroupId, guide: GuideId, env: Any) -> None:
        """Give a visitor group to a tour guide; the tour starts at the earliest minute the
        guide is free for a whole tour inside their availability, no earlier than the group's
        arrival.

        Args:
            group: id of the group to tour.
            guide: id of the guide who leads it.
        """
        env._assign(env.instance.group_index[group], env.instance.guide_index[guide])

    def submit_plan(assignments: Plan, env: Any) -> None:  # type: ignore[valid-type]
        """Finish with a whole plan: for each guide, the tours they lead as
        {"group": id, "start": minute from midnight}. Groups already assigned must appear
        with the same guide and start; list each group at most once.

        Args:
            assignments: guide id -> list of tours.
        """
        env._apply_plan()

    return [
        Action.from_function(assign, env_name="realm-p2"),
        Action.from_function(submit_plan, env_name="realm-p2"),
    ]


class _Schedule:
    """Who leads which group when."""

    def __init__(self, inst: P2Instance) -> None:
        self.inst = inst
        self.G, self.K, self.D = len(inst.groups), len(inst.guides), inst.tour_duration
        self.compatible = np.array(
            [[inst.compatible(g, k) for k in range(self.K)] for g in range(self.G)], dtype=bool
        )
        self.reset()

    def reset(self) -> None:
        self.guide_of = np.full(self.G, -1, dtype=np.int64)
        self.start = np.full(self.G, -1, dtype=np.int64)
        self.tours: list[list[tuple[int, int]]] = [[] for _ in range(self.K)]  # (start, group)

    def earliest(self, g: int, k: int) -> int | None:
        """First minute >= arrival and >= the guide's start where a whole tour fits."""
        gd, D = self.inst.guides[k], self.D
        s = max(self.inst.groups[g].arrival, gd.available_from)
        for a, _ in self.tours[k]:
            if s + D <= a:
                break
            if s < a + D:
                s = a + D
        return s if s + D <= gd.available_to else None

    def why_not(self, g: int, k: int) -> str | None:
        grp, gd = self.inst.groups[g], self.inst.guides[k]
        if self.guide_of[g] >= 0:
            return f"{grp.group_id} already has a guide"
        if grp.size > gd.max_group_size:
            return f"{grp.group_id} ({grp.size} people) is larger than {gd.guide_id}'s cap {gd.max_group_size}"
        if grp.size > self.inst.max_group_size:
            return f"{grp.group_id} ({grp.size} people) is larger than the campus cap {self.inst.max_group_size}"
        if self.earliest(g, k) is None:
            return f"{gd.guide_id} has no free {self.D}-minute slot for {grp.group_id} in their availability"
        return None

    def assign(self, g: int, k: int, start: int) -> None:
        self.guide_of[g], self.start[g] = k, start
        self.tours[k].append((int(start), g))
        self.tours[k].sort()

    # -- scoring from the schedule itself ----------------------------------------------
    def group_ok(self, g: int) -> bool:
        k = int(self.guide_of[g])
        if k < 0:
            return False
        grp, gd, s = self.inst.groups[g], self.inst.guides[k], int(self.start[g])
        return (
            s >= grp.arrival
            and grp.size <= min(gd.max_group_size, self.inst.max_group_size)
            and gd.available_from <= s
            and s + self.D <= gd.available_to
        )

    def guide_clean(self, k: int) -> bool:
        starts = [a for a, _ in self.tours[k]]
        return all(b - a >= self.D for a, b in zip(starts, starts[1:]))

    @property
    def waiting(self) -> int:
        return int(
            sum(
                max(0, int(self.start[g]) - self.inst.groups[g].preferred)
                for g in range(self.G)
                if self.guide_of[g] >= 0
            )
        )

    @property
    def imbalance(self) -> int:
        loads = [len(t) for t in self.tours]
        return max(loads) - min(loads)

    @property
    def cost(self) -> int:
        return self.waiting + self.inst.balance_weight * self.imbalance

    @property
    def feasible(self) -> bool:
        return all(self.group_ok(g) for g in range(self.G)) and all(self.guide_clean(k) for k in range(self.K))


@evaluator(name="all_groups_served")
def _all_served(env: Any) -> bool:
    """Every group has a valid tour and no guide leads two tours at once."""
    return env.schedule.feasible


def _served_evaluator(g: int, gid: str) -> Evaluator:
    @evaluator(name=f"served_{gid}")
    def check(env: Any) -> bool:
        return env.schedule.group_ok(g)

    check.description = f"{gid} has a valid tour"
    return check


class GroupToursEnv(RenderModesMixin, InstanceSwapMixin, ReferenceMixin, PendingPlanMixin, CrabEnv):
    """REALM P2 multi-group tours by single assignments (RL) or whole plans (LLM agents).

    Args:
        instance: a shipped instance name (``"p2_small_00"`` ... ``"p2_large_05"``), a path to
            a JSON file (crab_gym's P2 format or an upstream REALM-Bench P2 file), a mapping,
            or a :class:`~crab_gym.envs.realm.group_tours.model.P2Instance`.
        generator: draw a fresh instance on every reset (seeded by ``reset(seed=...)``):
            ``{"n_groups": g, "n_guides": k, "size": "small"}``. Overrides ``instance``;
            references of drawn instances are solved at the end of an episode and cached.
        reference: a known reference cost to use instead of the shipped/cached/solved one.
        render_mode: ``"ansi"`` or ``"rgb_array"``.
        invalid_action_penalty, progress_weight, optimality_weight: see ``CrabEnv``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    @checked_init
    def __init__(
        self,
        instance: str | Path | dict | P2Instance = DEFAULT_INSTANCE,
        *,
        generator: dict | None = None,
        reference: float | None = None,
        render_mode: str | None = None,
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
    ) -> None:
        self._generator = _generator_options(generator)
        if self._generator is not None:
            g = self._generator
            inst = generate_p2(g["size"], 0, n_groups=g["n_groups"], n_guides=g["n_guides"])
        else:
            inst = INSTANCE_KIND.load(instance, load_p2)
        self._fixed_reference = reference
        super().__init__(
            _make_actions(inst),
            render_mode=render_mode,
            invalid_action_penalty=invalid_action_penalty,
            progress_weight=progress_weight,
            optimality_weight=optimality_weight,
        )
        G, K = len(inst.groups), len(inst.guides)
        self._size_bound = float(max(100, max(x.size for x in inst.groups), inst.max_group_size))
        self.observation_space = spaces.Dict(
            {
                "group_size": spaces.Box(0.0, self._size_bound, (G,), np.float32),
                "group_arrival": spaces.Box(0.0, float(DAY), (G,), np.float32),
                "group_preferred": spaces.Box(0.0, float(DAY), (G,), np.float32),
                "group_guide": spaces.Box(-1, K - 1, (G,), np.int64),
                "group_start": spaces.Box(-1.0, float(DAY), (G,), np.float32),
                "guide_window": spaces.Box(0.0, float(DAY), (K, 2), np.float32),
                "guide_cap": spaces.Box(0.0, self._size_bound, (K,), np.float32),
                "guide_load": spaces.Box(0, G, (K,), np.int64),
                "tour_duration": spaces.Box(0.0, float(DAY), (1,), np.float32),
                "action_mask": spaces.MultiBinary(self.codec.n_flat),
            }
        )
        self._use_instance(inst)
        self._pending: list[tuple[int, int, int]] | None = None
        self._last_event = ""

    # ================================================================== instance
    def _use_instance(self, inst: P2Instance) -> None:
        self.instance = inst
        self.schedule = _Schedule(inst)
        self._reference_record: dict | None = None
        b = self._size_bound
        self._obs_static = {
            "group_size": np.clip([g.size for g in inst.groups], 0, b).astype(np.float32),
            "group_arrival": np.clip([g.arrival for g in inst.groups], 0, DAY).astype(np.float32),
            "group_preferred": np.clip([g.preferred for g in inst.groups], 0, DAY).astype(np.float32),
            "guide_window": np.clip(
                [[g.available_from, g.available_to] for g in inst.guides], 0, DAY
            ).astype(np.float32),
            "guide_cap": np.clip([g.max_group_size for g in inst.guides], 0, b).astype(np.float32),
            "tour_duration": np.array([min(inst.tour_duration, DAY)], dtype=np.float32),
        }
        self._evaluators = [_served_evaluator(g, gid) for g, gid in enumerate(inst.group_ids)]

    def _check_fits(self, inst: P2Instance) -> None:
        cur = self.instance
        if (inst.group_ids, inst.guide_ids) != (cur.group_ids, cur.guide_ids):
            raise ValueError(f"instance {inst.name} has other group/guide ids than {cur.name}; make a new env")

    def _load_instance(self, spec: Any) -> P2Instance:
        return INSTANCE_KIND.load(spec, load_p2)

    def _draw_instance(self) -> P2Instance:
        g, seed = self._generator, draw_seed(self.np_random)
        return generate_p2(
            g["size"], seed, name=f"p2_generated_{seed}", n_groups=g["n_groups"], n_guides=g["n_guides"]
        )

    def _solve_reference(self) -> dict:
        from crab_gym.envs.realm.group_tours.references import reference_p2

        return reference_p2(self.instance)

    # ================================================================== CrabEnv hooks
    def _reset_state(self, options: dict[str, Any] | None) -> None:
        if not self._next_instance(options):
            self.schedule.reset()
        self._pending = None
        self._last_event = ""

    def _build_graph(self) -> nx.DiGraph:
        return goal_graph(_all_served, self._evaluators)

    def _get_obs(self) -> dict[str, Any]:
        s = self.schedule
        obs = {k: v.copy() for k, v in self._obs_static.items()}
        obs["group_guide"] = s.guide_of.copy()
        obs["group_start"] = np.clip(s.start, -1, DAY).astype(np.float32)
        obs["guide_load"] = np.array([len(t) for t in s.tours], dtype=np.int64)
        obs["action_mask"] = self._action_mask().astype(np.int8)
        return obs

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        inst = self.instance
        if name == "assign":
            return self.schedule.why_not(inst.group_index[args["group"]], inst.guide_index[args["guide"]])
        reason, tours = self._check_plan(args["assignments"])
        if reason is None:
            self._pending = tours
        return reason

    def _check_plan(self, plan: Any) -> tuple[str | None, list[tuple[int, int, int]]]:
        inst, s = self.instance, self.schedule
        listed: dict[int, tuple[int, int]] = {}
        for gid in inst.guide_ids:
            k = inst.guide_index[gid]
            for tour in getattr(plan, gid):
                g = inst.group_index[tour.group]
                if g in listed:
                    return f"{tour.group} is listed more than once", []
                listed[g] = (k, int(tour.start))
        for g in np.flatnonzero(s.guide_of >= 0):
            fixed = (int(s.guide_of[g]), int(s.start[g]))
            if listed.get(int(g)) != fixed:
                k, st = fixed
                return (
                    f"{inst.group_ids[g]} is already assigned to {inst.guide_ids[k]} at minute {st}; "
                    "the plan must keep it", []
                )
        new = [(g, k, st) for g, (k, st) in sorted(listed.items()) if s.guide_of[g] < 0]
        return None, new

    def _is_terminated(self) -> bool:
        s = self.schedule
        return self._submitted or bool((s.guide_of >= 0).all()) or not self._action_mask().any()

    def _optimality(self) -> float:
        s = self.schedule
        if not s.feasible:
            return 0.0
        ref, cost = self.reference, s.cost
        if ref is None or cost <= 0 or cost <= ref:
            return 1.0
        return ref / cost

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        s, inst = self.schedule, self.instance
        ok_groups = [s.group_ok(g) for g in range(s.G)]
        clean = [s.guide_clean(k) for k in range(s.K)]
        useful = sum(
            1 for k in range(s.K) if clean[k] and s.tours[k] and all(ok_groups[g] for _, g in s.tours[k])
        )
        could = min(int(s.compatible.any(axis=0).sum()), s.G)
        rec = self.reference_record
        metrics = {
            "planning_quality": sum(ok_groups) / s.G,
            "optimality": self._optimality(),
            "constraint_satisfaction": (sum(ok_groups) + sum(clean)) / (s.G + s.K),
            "coordination": min(1.0, useful / could) if could else 1.0,
            "feasible": s.feasible,
            "cost": s.cost,
            "waiting_minutes": s.waiting,
            "imbalance": s.imbalance,
            "reference": rec["value"],
            "reference_status": rec["status"],
        }
        solution = {
            "assignments": {
                inst.guide_ids[k]: [{"group": inst.group_ids[g], "start": int(a)} for a, g in s.tours[k]]
                for k in range(s.K)
            },
            "cost": s.cost,
        }
        return metrics, solution

    def _action_mask(self) -> np.ndarray:
        s = self.schedule
        mask = np.zeros(self.codec.n_flat, dtype=bool)
        if self._submitted:
            return mask
        for g in np.flatnonzero(s.guide_of < 0):
            for k in np.flatnonzero(s.compatible[g]):
                mask[g * s.K + k] = s.earliest(int(g), int(k)) is not None
        return mask

    def _extra_info(self) -> dict[str, Any]:
        s = self.schedule
        return {"assigned": int((s.guide_of >= 0).sum()), "waiting_minutes": s.waiting, "event": self._last_event}

    # ================================================================== action entries
    _submitted = False

    def _assign(self, g: int, k: int) -> None:
        start = self.schedule.earliest(g, k)
        if start is None:  # _check_action masks this; direct calls get a clear error
            raise RuntimeError("assign runs through env.step(), which checks the slot first")
        self.schedule.assign(g, k, start)
        inst = self.instance
        self._last_event = f"{inst.group_ids[g]} with {inst.guide_ids[k]} at {_clock(start)}"

    def _apply_plan(self) -> None:
        tours, self._pending = self._pending, None
        if tours is None:
            raise RuntimeError("submit_plan runs through env.step(), which validates the plan first")
        for g, k, start in tours:
            self.schedule.assign(g, k, start)
        self._submitted = True
        self._last_event = f"plan with {len(tours)} more tours submitted"

    def submit_plan(self, plan: dict) -> tuple:
        """Convenience: ``env.step`` with a ``submit_plan`` tool call for ``{"assignments": ...}``."""
        return self.step({"name": "submit_plan", "arguments": {"assignments": plan["assignments"]}})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple:
        self._submitted = False
        return super().reset(seed=seed, options=options)

    # ================================================================== rendering
    def _render_text(self) -> str:
        s, inst = self.schedule, self.instance
        lines = [
            f"{inst.name}: {s.G} groups, {s.K} guides, {s.D}-min tours | assigned "
            f"{int((s.guide_of >= 0).sum())}/{s.G} | waiting {s.waiting} min | imbalance {s.imbalance}"
        ]
        for k, gd in enumerate(inst.guides):
            tours = " ".join(f"{inst.group_ids[g]}@{_clock(a)}" for a, g in s.tours[k])
            lines.append(
                f"{gd.guide_id} [{_clock(gd.available_from)}-{_clock(gd.available_to)}, cap {gd.max_group_size}]: "
                f"{tours or '-'}"
            )
        todo = [
            f"{grp.group_id}({grp.size}, arrives {_clock(grp.arrival)}, prefers {_clock(grp.preferred)})"
            for g, grp in enumerate(inst.groups)
            if s.guide_of[g] < 0
        ]
        lines.append("waiting for a guide: " + (", ".join(todo) if todo else "none"))
        return "\n".join(lines) + "\n"

    def _render_image(self) -> np.ndarray:
        s, inst = self.schedule, self.instance
        ink, grid, orange = (30, 30, 30), (225, 225, 225), (213, 94, 0)
        names = [gd.guide_id.upper() for gd in inst.guides]
        width, right, head, ticks = 640, 20, 30, 10
        left = max(Canvas.text_width(n) for n in names) + 12
        top = head + ticks
        row = max(14, min(48, 400 // s.K))
        height = top + row * s.K + 22
        canvas = Canvas(width, height, background=(255, 255, 255))
        t0 = min(min(g.arrival for g in inst.groups), min(g.available_from for g in inst.guides))
        t1 = max(inst.horizon, int(s.start.max()) + s.D if (s.start >= 0).any() else 0, t0 + 1)
        t0 -= t0 % 60
        scale = (width - left - right) / max(t1 - t0, 1)

        def x(t: float) -> float:
            return left + (t - t0) * scale

        # header: the state in words, then a key
        canvas.text(6, 4, f"assigned {int((s.guide_of >= 0).sum())}/{s.G} groups  waiting {s.waiting} min  "
                          f"imbalance {s.imbalance}  tours {s.D} min", ink)
        kx, ky = 6, 17
        for key, name in (("tour", "tour (group id)"), ("free", "guide available"), ("wait", "wait past preferred"),
                          ("tick", "preferred start")):
            if key == "tour":
                canvas.rect(kx, ky, kx + 10, ky + 7, colour(0))
            elif key == "free":
                canvas.rect(kx, ky, kx + 10, ky + 7, (235, 235, 235))
                canvas.outline(kx, ky, kx + 10, ky + 7, (200, 200, 200))
            elif key == "wait":
                canvas.rect(kx, ky + 2, kx + 10, ky + 5, orange)
            else:
                canvas.line(kx + 5, ky, kx + 5, ky + 7, colour(1), width=2)
            canvas.text(kx + 14, ky, name, ink)
            kx += 14 + canvas.text_width(name) + 14
        step = 60 * max(1, int(np.ceil((t1 - t0) / 60 / ((width - left - right) // 40))))
        axis = top + row * s.K
        for h in range(t0, t1 + 1, 60):  # hour grid, labelled every `step` minutes
            canvas.line(x(h), top - 2, x(h), axis + 2, grid)
            if (h - t0) % step == 0:
                canvas.line(x(h), axis, x(h), axis + 4, ink)
                canvas.label(x(h), axis + 7, _clock(h), ink, align="centre")
        canvas.line(left, axis, width - right, axis, ink)
        for k, gd in enumerate(inst.guides):
            y0 = top + k * row
            canvas.label(left - 6, y0 + row / 2 - 3, names[k], ink, align="right")
            canvas.rect(x(gd.available_from), y0 + 2, x(gd.available_to), y0 + row - 2, (235, 235, 235))
            for a, g in s.tours[k]:
                fill = colour(g)
                canvas.rect(x(a), y0 + 5, x(a + s.D), y0 + row - 3, fill)
                canvas.outline(x(a), y0 + 5, x(a + s.D) - 1, y0 + row - 3, (40, 40, 40))
                room = x(a + s.D) - x(a) - 4
                for name in (inst.group_ids[g].upper(), short_id(inst.group_ids[g])):
                    if canvas.text_width(name) <= room and row - 8 >= 7:
                        canvas.text(x(a) + 3, y0 + 5 + (row - 8 - 7) // 2, name, ink_on(fill))
                        break
            for a, g in s.tours[k]:  # waiting beyond the preferred start, above the bars
                pref = inst.groups[g].preferred
                if a > pref:
                    canvas.rect(x(pref), y0 + 1, x(a) + 1, y0 + 4, orange)
                    canvas.rect(x(pref), y0 + 1, x(pref) + 2, y0 + 6, orange)
        for g, grp in enumerate(inst.groups):  # preferred starts as ticks above the rows
            canvas.line(x(grp.preferred), head + 1, x(grp.preferred), top - 3, colour(g), width=2)
        return canvas.image()


def _generator_options(generator: Any) -> dict[str, Any] | None:
    if generator is None:
        return None
    if not isinstance(generator, dict):
        raise TypeError(
            'generator must be a dict like {"n_groups": 6, "n_guides": 3, "size": "small"} '
            f"(keys: {', '.join(GENERATOR_KEYS)}); got {type(generator).__name__} {generator!r}"
        )
    check_option_keys("generator option", generator, GENERATOR_KEYS)
    opts = {"size": "small", **generator}
    for key in ("n_groups", "n_guides"):
        if key not in opts or int(opts[key]) < 1:
            raise ValueError(f"generator needs {key} >= 1, got {opts}")
        opts[key] = int(opts[key])
    return opts
