"""Realm-P2-v0: multi-group campus tours (REALM-Bench P2), as the Gymnasium env
:class:`GroupToursEnv`; its docstring is the env's reference (model, spaces, reward, episode
end, arguments).

This module does not use ``from __future__ import annotations``: the action signatures are
built inside a function with ``Literal``/``Annotated`` types that pydantic must resolve.
"""

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field, create_model

from crab_gym.core.action import Action
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.realm.common.env import DAY, RealmEnv, checked_init, goal_graph, hhmm
from crab_gym.envs.realm.common.instance_source import InstanceSource, SizedGenerator, files_kind
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.group_tours.checker import check
from crab_gym.envs.realm.group_tours.coordination import guide_coordination, reported_coordination
from crab_gym.envs.realm.group_tours.formats import FILES, load_p2
from crab_gym.envs.realm.group_tours.generator import generate_p2
from crab_gym.envs.realm.group_tours.model import P2Instance
from crab_gym.envs.realm.group_tours.references import reference_p2
from crab_gym.envs.realm.group_tours.render import VIEWER
from crab_gym.envs.realm.group_tours.sim import Schedule

DEFAULT_INSTANCE = "p2_small_00"

#: The ``instance`` and ``generator`` arguments: shipped or own files, or drawn instances.
SOURCE = InstanceSource(files_kind(FILES), load_p2, SizedGenerator(generate_p2, {"n_groups": 6, "n_guides": 3}, "p2"),
                        DEFAULT_INSTANCE)


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

    return [Action.from_function(entry, env_name="realm-p2") for entry in (assign, submit_plan)]


@evaluator(name="all_groups_served")
def _all_served(env: Any) -> bool:
    """Every group has a valid tour and no guide leads two tours at once."""
    return env.schedule.feasible


def _served_evaluator(g: int, gid: str) -> Evaluator:
    """The sub-goal of one group: it has a valid tour."""
    return evaluator(lambda env: env.schedule.group_ok(g), name=f"served_{gid}", description=f"{gid} has a valid tour")


class GroupToursEnv(RealmEnv):
    """Give every visitor group a tour guide and a start minute, so that every group is toured
    in time with the least waiting and a fair share of tours per guide (REALM-Bench P2).

    ## Description

    REALM-Bench P2 assigns groups to guides with time windows (a VRP-TW / assignment
    problem); ``docs/group_tours.md`` tells the model at length,
    :mod:`crab_gym.envs.realm.group_tours.model` holds the instance type. Times are integer
    minutes, clock times minutes from midnight.

    | part | model |
    |---|---|
    | decision | for every group, the guide who leads it and the minute its tour starts |
    | constraints | each group is toured once, starting no earlier than it arrives; it fits its guide's and the campus's group-size caps; the whole tour (`tour_duration` minutes) lies inside the guide's availability; a guide leads one tour at a time |
    | objective | minimise the waiting beyond each group's preferred start plus `balance_weight` x (most - fewest tours led by a guide) |

    An RL agent assigns one group at a time; an LLM agent may submit the whole plan in
    REALM's solution shape. A submitted plan may break constraints (beyond keeping the groups
    already assigned): it is scored, and infeasible.

    ## Action Space

    A `OneOf` over one `Dict` of arguments per action; `env.step` takes an element of it or a
    tool call `{"name": ..., "arguments": {...}}` (`env.unwrapped.tools()` lists the tools).
    `G` groups, `K` guides.

    | action | arguments | space | effect |
    |---|---|---|---|
    | `assign` | `group`, `guide`: ids | `Dict(group=Discrete(G), guide=Discrete(K))` | the group's tour starts at the earliest minute the guide is free for a whole tour, no earlier than its arrival (earlier idle gaps included), so assigning in the order of an optimal plan reproduces it |
    | `submit_plan` | `assignments`: guide id -> list of `{"group": id, "start": minute}` | `Dict(assignments=Dict(...))`: per guide id, a `Sequence(Dict(group=Discrete(G), start=Discrete(2881)))` | finish with the whole plan; groups already assigned keep their guide and start, each group is listed at most once |

    `action_masks()` (also `obs["action_mask"]`: `G x K` entries, group major) allows the
    pairs of an unassigned group and a guide it fits with a free slot.
    `env.unwrapped.submit_plan({"assignments": {...}})` is a shortcut for the tool call.

    ## Observation Space

    A `Dict`; `S` is the largest group size or cap (at least 100).

    | key | space | meaning |
    |---|---|---|
    | `group_size` | `Box(0, S, (G,))` | people in each group |
    | `group_arrival` | `Box(0, 2880, (G,))` | the minute each group arrives |
    | `group_preferred` | `Box(0, 2880, (G,))` | each group's preferred start |
    | `group_guide` | `Box(-1, K - 1, (G,), int64)` | each group's guide (-1: none yet) |
    | `group_start` | `Box(-1, 2880, (G,))` | each group's start minute (-1: none yet) |
    | `guide_window` | `Box(0, 2880, (K, 2))` | each guide's availability, from and to |
    | `guide_cap` | `Box(0, S, (K,))` | each guide's group-size cap |
    | `guide_load` | `Box(0, G, (K,), int64)` | tours each guide leads so far |
    | `tour_duration` | `Box(0, 2880, (1,))` | minutes of one tour |
    | `action_mask` | `MultiBinary(G * K)` | the `assign`s allowed now |

    ## Rewards

    A valid step earns `progress_weight` x the rise of the sub-goal completeness (sub-goals:
    each group with a valid tour, then `all_groups_served`: every group toured and no guide
    leading two tours at once). The last step adds `optimality_weight` x optimality,
    `min(1, reference / cost)` for a feasible plan and 0 otherwise (with a reference of 0,
    only a plan of cost 0 scores). With the default weights a return lies in [0, 1]; 1 is a
    feasible plan costing no more than the reference. An invalid action (masked, malformed,
    outside the action space) changes nothing, earns `-invalid_action_penalty` and says why
    in `info["error"]`.

    ## Starting State

    No group has a guide. `reset(seed=...)` restarts the current instance;
    `reset(options={"instance": ...})` switches to another instance with the same group and
    guide ids; with a `generator`, every reset draws a fresh instance seeded by
    `reset(seed=...)`.

    ## Episode End

    The episode terminates when every group has a guide, when a plan is submitted, or when no
    assignment is possible any more; it is never truncated. `info` always holds `assigned`,
    `waiting_minutes` and `event` besides the common keys. At the end, `info["metrics"]`
    holds `planning_quality` (share of groups served validly), `optimality`,
    `constraint_satisfaction` (share of the per-group and per-guide constraints met),
    `coordination` (each guide is an agent: `balanced / G x (1 - conflicts / listings)`,
    where `balanced` counts the clean tours (valid, no group claimed twice, no overlap with
    the guide's other tours) that fit inside each guide's fair share of the `G` groups, split
    as evenly as possible over the guides that fit some group, and `conflicts` counts the
    listings of a doubly claimed group or of overlapping tours; 0 with no tours, 1 only for
    a conflict-free plan touring every group with no guide above its fair share; see
    :mod:`crab_gym.envs.realm.group_tours.coordination`), `feasible`, `cost`, `waiting_minutes`,
    `imbalance`, `reference` and `reference_status`; `info["solution"]` holds
    `{"assignments": {guide: [{"group", "start"}]}, "cost"}`.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | `instance` | `"p2_small_00"` | a shipped name (`p2_small_00` ... `p2_large_05`; all: `crab_gym.datasets.list_instances("P2")`), a path to a JSON file (crab_gym's P2 format or an upstream REALM-Bench P2 file), a mapping, or a `P2Instance` |
    | `generator` | `None` | draw a fresh instance on every reset: `{"n_groups": g, "n_guides": k, "size": "small"}`; overrides `instance`. A drawn instance's reference is solved when first needed (at the end of its first episode) and cached on disk; or your own callable `generator(rng) -> instance` (as in Jumanji), whose draws must fit the env's spaces |
    | `reference` | `None` | a known reference cost instead of the shipped, cached or solved one |
    | `reference_solve` | `"deferred"` | `"deferred"`: an instance nobody shipped (generated, your file, a schedule changed by an injected disruption) is not solved inside `step()`; `finish_metrics()` solves it after the episode (the evaluation runner calls it; until then the metrics say `optimality_pending` and the last reward's optimality term is 0: `deferred_reward()` gives that term after the episode, and the runner adds it to the return); `"inline"`: solved inside the last `step()` |
    | `render_mode` | `None` | `"ansi"` (text) or `"rgb_array"` (a timeline per guide) |
    | `invalid_action_penalty`, `progress_weight`, `optimality_weight` | `0.0`, `0.5`, `0.5` | the reward weights (see Rewards) |

    `env.unwrapped.reference` is the current instance's
    :class:`~crab_gym.envs.realm.common.references.Reference`: value, status, solver and the
    oracle's plan as `submit_plan` arguments (`{"assignments": {...}}`).

    ## Version History

    * v0: initial version. Later, still v0 (dynamics and scores unchanged):
      `env.unwrapped.reference` became a `Reference` record (it was the value, a float, with
      the record as the dict `reference_record`).
    """

    instance_source = SOURCE
    viewer = VIEWER
    checker = staticmethod(check)
    reference_lookup = staticmethod(reference_p2)
    #: Each guide is an agent (``crab_gym.parallel_env``); when every guide passes, the tours
    #: so far are submitted as the plan (see :meth:`joint_pass_call`).
    agent_arguments = ("guide",)

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | P2Instance = DEFAULT_INSTANCE, *, generator: dict | Callable[..., Any] | None = None,
        **options: Any,
    ) -> None:
        self._generator, inst = self.instance_source.start(instance, generator)
        super().__init__(_make_actions(inst), **options)  # reference, render_mode and the reward weights
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

    # ================================================================== RealmEnv hooks
    def _check_fits(self, inst: P2Instance) -> None:
        cur = self.instance
        if (inst.group_ids, inst.guide_ids) != (cur.group_ids, cur.guide_ids):
            raise ValueError(f"instance {inst.name} has other group/guide ids than {cur.name}; make a new env")

    def _use_instance(self, inst: P2Instance) -> None:
        self.instance = inst
        self.schedule = Schedule(inst)
        self._submitted = False
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

    def _restart(self) -> None:
        self.schedule.reset()
        self._submitted = False

    def _agent_cost(self) -> float:
        return self.schedule.cost

    def _plan_feasible(self) -> bool:
        return self.schedule.feasible

    # ================================================================== CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        return self._instance_graph(lambda: goal_graph(_all_served, self._evaluators))

    def _get_obs(self) -> dict[str, Any]:
        s = self.schedule
        obs = {k: v.copy() for k, v in self._obs_static.items()}
        obs["group_guide"] = s.guide_of.copy()
        obs["group_start"] = np.clip(s.start, -1, DAY).astype(np.float32)
        obs["guide_load"] = np.array([len(t) for t in s.tours], dtype=np.int64)
        obs["action_mask"] = self._current_mask().astype(np.int8)
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
        return self._submitted or bool((s.guide_of >= 0).all()) or not self._current_mask().any()

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        s = self.schedule
        ok_groups = [s.group_ok(g) for g in range(s.G)]
        clean = [s.guide_clean(k) for k in range(s.K)]
        valid = {gid for gid, ok in zip(self.instance.group_ids, ok_groups) if ok}
        plan = s.plan()
        ref = self.reference
        metrics = {
            "planning_quality": sum(ok_groups) / s.G,
            "optimality": self._optimality(),
            "constraint_satisfaction": (sum(ok_groups) + sum(clean)) / (s.G + s.K),
            "coordination": reported_coordination(guide_coordination(self.instance, plan, valid), s.feasible),
            "feasible": s.feasible,
            "cost": s.cost,
            "waiting_minutes": s.waiting,
            "imbalance": s.imbalance,
            "reference": ref.value,
            "reference_status": ref.status,
        }
        return metrics, {**plan, "cost": s.cost}

    def _solution(self) -> dict[str, Any]:
        """The tours assigned, with their cost (needs no reference)."""
        return {**self.schedule.plan(), "cost": self.schedule.cost}

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
    def _assign(self, g: int, k: int) -> None:
        start = self.schedule.earliest(g, k)
        if start is None:  # _check_action masks this; direct calls get a clear error
            raise RuntimeError("assign runs through env.step(), which checks the slot first")
        self.schedule.assign(g, k, start)
        inst = self.instance
        self._last_event = f"{inst.group_ids[g]} with {inst.guide_ids[k]} at {hhmm(start)}"

    def _apply_plan(self) -> None:
        tours, self._pending = self._pending, None
        if tours is None:
            raise RuntimeError("submit_plan runs through env.step(), which validates the plan first")
        for g, k, start in tours:
            self.schedule.assign(g, k, start)
        self._submitted = True
        self._last_event = f"plan with {len(tours)} more tours submitted"

    def joint_pass_call(self) -> dict[str, Any] | None:
        """Every guide passed: submit the tours assigned so far (the episode ends)."""
        if self._terminated:
            return None
        return {"name": "submit_plan", "arguments": {"assignments": self.schedule.plan()["assignments"]}}

    def submit_plan(self, plan: dict) -> tuple:
        """Convenience: ``env.step`` with a ``submit_plan`` tool call for ``{"assignments": ...}``."""
        return self.step({"name": "submit_plan", "arguments": {"assignments": plan["assignments"]}})

