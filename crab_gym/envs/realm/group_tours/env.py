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
from crab_gym.envs.realm.group_tours.formats import load_p2, shipped_p2_names
from crab_gym.envs.realm.group_tours.generator import generate_p2
from crab_gym.envs.realm.group_tours.model import P2Instance
from crab_gym.envs.realm.group_tours.references import reference_p2
from crab_gym.envs.realm.group_tours.render import render_image, render_text
from crab_gym.envs.realm.group_tours.sim import Schedule

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
        self.schedule = Schedule(inst)
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
        return optimality_ratio(self.reference, self.schedule.cost, self.schedule.feasible)

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        s = self.schedule
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
        solution = {**s.plan(), "cost": s.cost}
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
        return render_text(self.instance, self.schedule)

    def _render_image(self) -> np.ndarray:
        return render_image(self.instance, self.schedule)


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
