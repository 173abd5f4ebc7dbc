"""The disruption kit (:mod:`crab_gym.envs.realm.common.disruption_env`) on a toy env: the
faced schedule, injection, reporting, the snapshot, pausing and the adaptation modes, with
their values asserted; and the five REALM envs with disruptions built on it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

import gymnasium as gym
import networkx as nx
import numpy as np
import pytest
from pydantic import BaseModel

from crab_gym.core import action, evaluator
from crab_gym.envs.realm.common.disruption_env import DisruptedRealmEnv
from crab_gym.envs.realm.common.disruptions import DisruptionKind, DisruptiveEnv, InvalidDisruptionError
from crab_gym.envs.realm.common.references import Reference, optimality_ratio

END = 60  # the toy episode ends when its clock reaches this minute


class Jam(BaseModel):
    """A toy disruption: ``delay`` minutes more on every wait while it lasts."""

    type: Literal["jam"] = "jam"
    location: str
    start: int | None = None
    duration: int = 10
    delay: int = 5

    def with_start(self, start: int) -> Jam:
        return self.model_copy(update={"start": start})

    def describe(self) -> str:
        return f"jam at {self.location} for {self.duration} min"


@dataclass
class ToyInstance:
    disruptions: list[Jam]
    places: tuple[str, ...] = ("a", "b")
    name: str = field(default="toy")


def parse_jam(data: Any, inst: ToyInstance) -> Jam:
    d = data if isinstance(data, Jam) else Jam.model_validate(data)
    if d.location not in inst.places:
        raise InvalidDisruptionError(f"unknown place {d.location!r}")
    return d


class ToySim:
    """A clock, the disruptions to come and those applied; a wait costs 10 minutes plus the
    delays in force."""

    def __init__(self, schedule: list[Jam]) -> None:
        self.clock, self.cost = 0, 0
        self.pending = sorted(schedule, key=lambda d: d.start)
        self.applied: list[Jam] = []

    def inject(self, d: Jam) -> None:
        self.pending = sorted([*self.pending, d], key=lambda d: d.start)

    def due(self) -> list[Jam]:
        fired = [d for d in self.pending if d.start <= self.clock]
        self.pending = [d for d in self.pending if d.start > self.clock]
        self.applied += fired
        return fired

    def active(self) -> list[Jam]:
        return [d for d in self.applied if d.start <= self.clock < d.start + d.duration]

    def copy(self) -> ToySim:
        return copy.deepcopy(self)


@action
def wait(env) -> None:
    """Let 10 minutes pass."""
    env._wait()


@evaluator(name="over")
def over(env) -> bool:
    return env.sim.clock >= END


class ToyDisruptedEnv(DisruptedRealmEnv):
    """Wait until minute 60 while jams strike (a toy of the disruption kit)."""

    disruption_kinds = {"jam": DisruptionKind("location")}
    disruption_parser = staticmethod(parse_jam)
    resolves = 0  # how many "resolve" yardsticks were computed (per class, reset by tests)

    def __init__(self, schedule: list[Jam], adaptation_reference: str = "deferred") -> None:
        self._init_disruptions(adaptation_reference)
        self.instance = ToyInstance(schedule)
        self.references_solved: list[list[Jam]] = []
        super().__init__([wait])
        self.observation_space = gym.spaces.Dict({"clock": gym.spaces.Box(0, END, (1,), np.float32),
                                                  "action_mask": gym.spaces.MultiBinary(1)})
        self._generator = None
        self._restart()

    @staticmethod
    def faced_reference(inst: ToyInstance, schedule: list[Jam]) -> Reference:
        return Reference.given(60 + sum(d.delay for d in schedule))

    def _solve_reference(self) -> Reference:
        self.references_solved.append(self.faced_schedule())
        return super()._solve_reference()

    # one instance: never swapped
    def _check_fits(self, inst: ToyInstance) -> None:
        raise ValueError("the toy has one instance")

    def _use_instance(self, inst: ToyInstance) -> None:
        raise ValueError("the toy has one instance")

    # the toy's dynamics
    def _restart(self) -> None:
        self._clear_disruptions()
        self._events: list[str] = []
        self.sim = ToySim(self._own_disruptions())
        self._settle()

    def _settle(self) -> None:
        fired = self.sim.due()
        self._note_fired(fired)
        if fired:
            self._take_snapshot(self.sim.copy, keep={"plan": ["wait"]})

    def _wait(self) -> None:
        self._unpause()
        self.sim.cost += 10 + sum(d.delay for d in self.sim.active())
        self.sim.clock += 10
        self._settle()
        if self.sim.clock == 30 and self.sim.pending:
            self._paused, self._pending_plan = True, {"toy": ["wait", "wait"]}

    def _disruption_clock(self) -> int | None:
        return None if self.sim.clock >= END else self.sim.clock

    def _active_disruptions(self) -> list[Jam]:
        return self.sim.active()

    def disruption_targets(self) -> dict[str, Any]:
        return {"routes": [], "locations": list(self.instance.places), "window": (0, END)}

    # the adaptation yardsticks
    def _stored_adaptation_value(self) -> float:
        return 70.0

    def _resolve_adaptation(self) -> float:
        type(self).resolves += 1
        return float(self._snapshot.cost + 10 * (END - self._snapshot.clock) // 10)

    # CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_node(over)
        return g

    def _get_obs(self) -> dict[str, Any]:
        return {"clock": np.array([self.sim.clock], np.float32), "action_mask": self.action_masks().astype(np.int8)}

    def _action_mask(self) -> np.ndarray:
        return np.array([self.sim.clock < END])

    def _is_terminated(self) -> bool:
        return self.sim.clock >= END

    def _agent_cost(self) -> float:
        return float(self.sim.cost)

    def _extra_info(self) -> dict[str, Any]:
        events, self._events = self._events, []
        return {"events": events, **self._fired_info(), **self._pause_info()}

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        cost = float(self.sim.cost)
        adaptation, yardstick = self._measure_adaptation(lambda v: optimality_ratio(v, cost, True))
        return {"cost": cost, "adaptation": adaptation, "adaptation_reference_cost": yardstick}, {}


def play(env: ToyDisruptedEnv) -> list[dict[str, Any]]:
    """Every info of an episode of waits, from the reset's on."""
    infos = [env.reset(seed=0)[1]]
    done = False
    while not done:
        _, _, done, _, info = env.step({"name": "wait", "arguments": {}})
        infos.append(info)
    return infos


def test_the_toy_env_follows_the_disruption_protocol():
    env = ToyDisruptedEnv([])
    assert isinstance(env, DisruptiveEnv)
    assert env.adaptation_mode == "deferred"
    with pytest.raises(ValueError, match="adaptation_reference must be one of"):
        ToyDisruptedEnv([], adaptation_reference="later")


def test_fired_disruptions_are_reported_once_with_an_event_and_while_active():
    env = ToyDisruptedEnv([Jam(location="a", start=20, duration=15)])
    infos = play(env)
    fired = [info["disruptions"] for info in infos]
    assert fired == [[], [], [{"type": "jam", "location": "a", "start": 20, "duration": 15, "delay": 5}], [], [], [], []]
    assert infos[2]["events"] == ["disruption at 00:20: jam at a for 15 min"]
    assert [info["active_disruptions"] for info in infos] == [[], [], ["jam at a for 15 min"], ["jam at a for 15 min"],
                                                             [], [], []]
    assert env.sim.cost == 70  # two waits while the jam is in force, 5 minutes more each


def test_injection_applies_now_schedules_for_later_and_refuses_after_the_end():
    env = ToyDisruptedEnv([])
    env.reset(seed=0)
    env.step({"name": "wait", "arguments": {}})  # minute 10
    now = env.apply_disruption({"type": "jam", "location": "b", "start": None, "duration": 30})
    assert now == {"applied": True, "scheduled": False, "clock": 10, "message": "applied at 00:10: jam at b for 30 min",
                   "disruption": {"type": "jam", "location": "b", "start": 10, "duration": 30, "delay": 5}}
    later = env.apply_disruption(Jam(location="a", start=40))
    assert later["scheduled"] and not later["applied"]
    assert later["message"] == "scheduled: jam at a for 10 min (applies when the clock reaches 00:40)"
    assert [d.start for d in env.faced_schedule()] == [10, 40]
    with pytest.raises(InvalidDisruptionError, match="unknown place 'c'"):
        env.apply_disruption({"type": "jam", "location": "c"})
    assert len(env.faced_schedule()) == 2  # an invalid disruption is not recorded
    play_on(env)
    assert env.apply_disruption(Jam(location="a")) == {"applied": False, "scheduled": False, "clock": -1,
                                                       "message": "the episode is over"}
    env.reset(seed=0)
    assert env.faced_schedule() == []  # a reset forgets the injected disruptions


def play_on(env: ToyDisruptedEnv) -> dict[str, Any]:
    """Step the current episode to its end; its last info."""
    done, info = False, {}
    while not done:
        _, _, done, _, info = env.step({"name": "wait", "arguments": {}})
    return info


def test_the_reference_faces_the_episode_schedule_and_is_looked_up_again_after_an_injection():
    own = Jam(location="a", start=20)
    env = ToyDisruptedEnv([own])
    env.reset(seed=0)
    assert env.reference.value == 65.0
    env.apply_disruption(Jam(location="b", start=50, delay=7))
    assert env.reference.value == 72.0
    assert env.reference.value == 72.0  # kept until the schedule changes
    assert env.references_solved == [[own], [own, Jam(location="b", start=50, delay=7)]]


def test_the_snapshot_is_the_state_at_the_first_disruption_and_injections_after_it_are_kept_apart():
    env = ToyDisruptedEnv([Jam(location="a", start=20), Jam(location="b", start=40)])
    env.reset(seed=0)
    assert env._snapshot is None
    env.step({"name": "wait", "arguments": {}})
    env.apply_disruption(Jam(location="b", start=15))  # before the first own one: fires at 20 as well
    env.step({"name": "wait", "arguments": {}})  # minute 20
    assert env._snapshot.clock == 20 and env._snapshot_keep == {"plan": ["wait"]}
    assert [d.start for d in env._snapshot.applied] == [15, 20]
    late = Jam(location="a", start=50)
    env.apply_disruption(late)
    env.step({"name": "wait", "arguments": {}})
    env.step({"name": "wait", "arguments": {}})  # minute 40: the second own one keeps the first snapshot
    assert env._snapshot.clock == 20
    assert env._injected_after_snapshot == [late]


def test_a_plan_paused_by_a_disruption_is_reported_until_the_agent_acts():
    env = ToyDisruptedEnv([Jam(location="a", start=40)])
    infos = play(env)
    assert [(i["paused"], i["pending_plan"]) for i in infos[2:5]] == [
        (False, {}), (True, {"toy": ["wait", "wait"]}), (False, {})]


@pytest.mark.parametrize(("mode", "last", "finished"), [
    # the re-solve from minute 20 (cost 20) waits 4 more times: 60; the episode cost 65
    ("resolve", (60 / 65, 60.0, False), (60 / 65, 60.0)),
    ("deferred", (None, None, True), (60 / 65, 60.0)),
    # the stored value, 70, beats the episode's cost: min(1, 70 / 65)
    ("oracle", (1.0, 70.0, False), (1.0, 70.0)),
])
def test_adaptation_by_mode(mode, last, finished):
    ToyDisruptedEnv.resolves = 0
    env = ToyDisruptedEnv([Jam(location="a", start=20)], adaptation_reference=mode)
    metrics = play(env)[-1]["metrics"]
    assert (metrics["adaptation"], metrics["adaptation_reference_cost"], metrics["adaptation_pending"]) == \
        pytest.approx(last)
    done = env.finish_metrics()
    assert (done["adaptation"], done["adaptation_reference_cost"]) == pytest.approx(finished)
    assert done["adaptation_pending"] is False
    env.finish_metrics()
    assert ToyDisruptedEnv.resolves == (0 if mode == "oracle" else 1)  # once per episode at most


def test_adaptation_does_not_apply_when_no_disruption_struck():
    for mode in ("deferred", "resolve", "oracle"):
        env = ToyDisruptedEnv([Jam(location="a", start=END + 10)], adaptation_reference=mode)
        metrics = play(env)[-1]["metrics"]
        assert metrics["adaptation"] is None and metrics["adaptation_reference_cost"] is None
        assert metrics["adaptation_pending"] is False


@pytest.mark.parametrize("env_id", ["Realm-P4-v0", "Realm-P7-v0", "Realm-P8-v0", "Realm-P9-v0", "Realm-P10-v0"])
def test_every_realm_env_with_disruptions_uses_the_kit(env_id):
    env = gym.make(env_id)
    assert isinstance(env.unwrapped, DisruptedRealmEnv)
    assert isinstance(env.unwrapped, DisruptiveEnv)
    env.close()
