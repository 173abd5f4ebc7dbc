"""The shared fleet kit (crab_gym.envs.realm.common.fleet): roads, the event clock, plan
names, the routing core and the map drawing, with values asserted on tiny cases."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from crab_gym.envs.canvas import Canvas, LabelPlacer
from crab_gym.envs.realm.common.fleet.render import draw_vehicles, fit_layout
from crab_gym.envs.realm.common.fleet.roads import FleetRoads, in_force
from crab_gym.envs.realm.common.fleet.routing import deterministic_attempts, search_parameters
from crab_gym.envs.realm.common.fleet.sim import (
    FleetSim,
    FleetVehicle,
    PlanError,
    plan_codes,
    skip_served,
    vehicle_codes,
)


@dataclass(frozen=True)
class _Jam:
    """A disruption adding ``delay`` minutes to road (i, j) both ways."""

    i: int
    j: int
    start: int | None
    duration: int
    delay: int
    type: str = "traffic_delay"

    def with_start(self, start: int) -> _Jam:
        end = self.start + self.duration if self.start is not None else start + self.duration
        return _Jam(self.i, self.j, start, max(0, end - start), self.delay, self.type)


class _Roads(FleetRoads):
    def add_delays(self, weights, active, at):
        for d in active:
            weights[d.i, d.j] += d.delay
            weights[d.j, d.i] += d.delay


# a - b - c in a line (10 minutes each), a - c direct 30
ROADS = [[0, 10, 30], [10, 0, 10], [30, 10, 0]]


def test_roads_shortest_paths_and_disruptions():
    net = _Roads(["a", "b", "c"], ROADS)
    assert net.static[0, 2] == 20 and net.connected()
    assert net.road_pairs() == [(0, 1), (0, 2), (1, 2)]
    jam = _Jam(0, 1, 600, 30, 15)
    hit = net.disrupted((jam,), 610)
    assert hit[0, 2] == 30 and hit[2, 0] == 30  # round the jam: the direct road
    assert hit[0, 1] == 25
    assert net.disrupted((jam,), 610) is hit  # cached
    assert not hit.flags.writeable
    assert net.disrupted((), 610) is net.static
    assert in_force([jam], 599) == () and in_force([jam], 600) == (jam,) and in_force([jam], 630) == ()


@dataclass
class _Van(FleetVehicle):
    route: list[int] = field(default_factory=list)


class _Sim(FleetSim):
    """Two vans; a stop s takes s minutes from wherever the van is."""

    def __init__(self, schedule=()):
        self.vehicles = [_Van(0, 100, 2), _Van(0, 105, 2)]
        self._start_schedule(schedule)

    def idle_minute(self) -> int:
        return -1

    def go(self, v, stop):
        van = self.vehicles[v]
        van.free += stop
        van.route.append(stop)

    def end_route(self, v):
        self.vehicles[v].ended = True


def test_event_clock_runs_a_plan_in_time_order():
    sim = _Sim()
    assert sim.clock == 100 and sim.acting() == [0]
    left, fired = sim.run_plan({0: [10, 10], 1: [3]})
    assert left == {} and fired == [] and sim.done and sim.clock is None and sim.now() == -1
    assert [v.route for v in sim.vehicles] == [[10, 10], [3]]
    assert [v.free for v in sim.vehicles] == [120, 108]


def test_event_clock_pauses_at_a_disruption_and_copies_apart():
    jam = _Jam(0, 1, 108, 30, 5)
    sim = _Sim([jam])
    seen = []
    left, fired = sim.run_plan({0: [10, 10], 1: [3, 3]}, pause_on_disruption=True,
                               on_disruption=lambda s, new: seen.append(s.clock))
    assert fired == [jam] and seen == [108]
    assert left == {0: [10], 1: [3]}  # van 1 free at 108 when it struck; van 0 at 110 has one left
    twin = sim.copy()
    twin.run_plan(left)
    assert twin.done and not sim.done and sim.applied == [jam] and twin.applied == [jam]
    assert sim.applied is not twin.applied


def test_injected_disruption_now_and_late():
    sim = _Sim()
    sim.inject(_Jam(0, 1, None, 20, 5))
    assert sim.pending[0].start == 100
    sim.inject(_Jam(0, 1, 90, 20, 5))  # started in the past: applied from now, ends at 110
    applied = sim.advance()
    assert [(d.start, d.duration) for d in applied] == [(100, 10), (100, 20)]


class _Inst:
    class _V:
        def __init__(self, vid):
            self.vehicle_id = vid

    vehicles = [_V("van"), _V("car")]

    @staticmethod
    def stop_names():
        return ["pickup:a", "pickup:b", "dropoff:venue"]


def test_plan_names_to_codes():
    assert plan_codes(_Inst, {"car": ["pickup:b", "dropoff:venue"]}) == {1: [1, 2]}
    assert vehicle_codes("van", ["pickup:a"], {"pickup:a": 0}, "hint") == [0]
    with pytest.raises(PlanError, match="vehicle van: unknown stop 'x'; stops: a"):
        vehicle_codes("van", ["x"], {"pickup:a": 0}, "stops: a")
    assert skip_served([0, 1, 2], [0]) == [1, 2]
    assert skip_served([1, 2], [0]) == [1, 2]


def test_routing_core_settings():
    assert [a[0] for a in deterministic_attempts(1, 2, 400)] == [
        "PARALLEL_CHEAPEST_INSERTION", "LOCAL_CHEAPEST_INSERTION", "PATH_CHEAPEST_ARC"]
    attempts = deterministic_attempts(3, 3, 400)
    assert attempts[-1] == ("PARALLEL_CHEAPEST_INSERTION", "GUIDED_LOCAL_SEARCH", 400) and len(attempts) == 4
    params = search_parameters("PATH_CHEAPEST_ARC", "GREEDY_DESCENT", 1.5, 7)
    assert params.time_limit.ToMilliseconds() == 1500 and params.solution_limit == 7


def test_layout_and_vehicle_discs():
    pos = fit_layout([[0, 0], [10, 5]], None, 200, 100, 20, 10, 10)
    assert pos.tolist() == [[20.0, 90.0], [180.0, 10.0]]
    c = Canvas(200, 100)
    spots = draw_vehicles(c, LabelPlacer(c), pos, [_Van(1, 0, 2), _Van(1, 0, 2)], 3)
    assert spots == [(177.0, 7.0), (180.0, 7.0)]
    assert np.any(c.image() != Canvas(200, 100).image())
