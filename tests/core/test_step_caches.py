"""The per-step savings of the shared path: the mask once per state, memoised tool calls, a
graph reused across episodes (GraphEvaluator.fresh, the incremental frontier, direct checks),
and the REALM helpers (per-instance lookups and graphs, clipped arrays). Values asserted."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from crab_gym.core import GraphEvaluator, evaluator
from crab_gym.envs.realm.common.env import RealmEnv, clipped
from crab_gym.envs.realm.common.references import SolvePending, deferring_solves, solves_deferred
from crab_gym.envs.realm.common.yardstick import Yardstick
from tests.core.toy_env import N_LAMPS, LampsEnv


class CountingLamps(LampsEnv):
    """LampsEnv counting its mask computations and reusing one graph."""

    def __init__(self) -> None:
        super().__init__()
        self.mask_calls = 0
        self._graph = super()._build_graph()

    def _action_mask(self):
        self.mask_calls += 1
        return super()._action_mask()

    def _build_graph(self):
        return self._graph


def flag(name: str, flags: dict[str, bool]):
    @evaluator(name=name)
    def check(env) -> bool:
        return flags[name]

    return check


# ---------------------------------------------------------------------- the mask
def test_mask_is_computed_once_per_state_and_handed_out_as_copies():
    env = CountingLamps()
    env.reset(seed=0)
    assert env.mask_calls == 1  # the observation's
    first = env.action_masks()
    first[:] = False  # a caller's copy: the env's mask is untouched
    assert env.action_masks().tolist() == env._action_mask().astype(bool).tolist()
    env.mask_calls = 0
    env.action_masks()
    env.action_masks()
    assert env.mask_calls == 0
    lamp = int(np.flatnonzero(~env.lit)[0])
    env.step({"name": "switch_on", "arguments": {"lamp": lamp}})
    assert env.mask_calls == 1  # a valid step changed the state: computed anew, once
    env.step({"name": "switch_on", "arguments": {"lamp": lamp}})  # invalid: already on
    assert env.mask_calls == 1
    assert env.action_masks()[lamp] == False  # noqa: E712


def test_mask_is_all_false_at_the_end_and_fresh_after_reset():
    env = CountingLamps()
    env.reset(seed=1)
    for lamp in range(N_LAMPS):
        if not env.lit[lamp]:
            _, _, terminated, _, _ = env.step({"name": "switch_on", "arguments": {"lamp": lamp}})
    assert terminated and not env.action_masks().any()
    env.reset(seed=1)
    assert env.action_masks().sum() == N_LAMPS  # 3 lamps off + switch_all_off


# ---------------------------------------------------------------------- tool calls
def test_parsed_calls_are_memoised_but_returned_fresh():
    env = LampsEnv()
    env.reset(seed=0)
    call, act, values = env.parse_action({"name": "switch_on", "arguments": {"lamp": 2}})
    assert call == {"name": "switch_on", "arguments": {"lamp": 2}} and values == {"lamp": 2}
    call["arguments"]["lamp"] = 3
    values["lamp"] = 3
    again, act2, values2 = env.parse_action({"name": "switch_on", "arguments": {"lamp": 2}})
    assert again == {"name": "switch_on", "arguments": {"lamp": 2}} and values2 == {"lamp": 2}
    assert act2 is act and len(env._cache["parsed"]) == 1
    # typed keys: True and 1 are memoised apart (each as pydantic validates it)
    call, _, values = env.parse_action({"name": "switch_on", "arguments": {"lamp": True}})
    assert call["arguments"] == {"lamp": 1} and values == {"lamp": 1} and len(env._cache["parsed"]) == 2
    # a call without arguments has its own entry too
    env.parse_action({"name": "switch_all_off", "arguments": {}})
    assert len(env._cache["parsed"]) == 3


# ---------------------------------------------------------------------- the graph
def test_fresh_evaluator_shares_the_checked_graph_and_starts_empty():
    flags = {"a": True, "b": True}
    a, b = flag("a", flags), flag("b", flags)
    g = nx.DiGraph()
    g.add_edge(a, b)
    ge = GraphEvaluator(g)
    assert ge.step() == [a, b] and ge.is_complete
    new = ge.fresh()
    assert new is not ge and new.graph is g and new._order is ge._order
    assert new.passed == set() and new.completeness == 0.0 and not new.is_complete
    assert new.frontier() == [a]
    assert ge.passed == {a, b}  # the old episode's evaluator keeps its passes


def test_frontier_counts_predecessors_incrementally():
    flags = {"a": False, "b": False, "c": False, "d": False}
    a, b, c, d = (flag(n, flags) for n in "abcd")
    g = nx.DiGraph()
    g.add_edges_from([(a, c), (b, c), (c, d)])
    ge = GraphEvaluator(g)
    assert set(ge.frontier()) == {a, b}
    flags.update(a=True, c=True, d=True)
    assert ge.step() == [a]  # c waits for b
    assert ge.frontier() == [b] and ge.completeness == 0.25
    flags["b"] = True
    assert ge.step() == [b, c, d] and ge.is_complete and ge.steps_to_complete == 2


def test_bound_evaluators_still_run_through_run_validated():
    @evaluator
    def at_least(n: int, env) -> bool:
        return env >= n

    g = nx.DiGraph()
    g.add_node(at_least.bind(n=2))
    ge = GraphEvaluator(g)
    assert ge.step(1) == [] and len(ge.step(2)) == 1


def test_reset_reuses_the_graph_structure():
    env = CountingLamps()
    env.reset(seed=0)
    first = env.graph
    env.reset(seed=0)
    assert env.graph is not first and env.graph._order is first._order


# ---------------------------------------------------------------------- REALM helpers
class _Memo:
    """Just enough of an env for its yardstick's memo: an instance and a cache."""

    def __init__(self) -> None:
        self._cache: dict = {}
        self.instance = object()
        self.yardstick = Yardstick(self)
        self._graph_of = None

    def _instance_graph(self, build):  # noqa: ANN001, ANN202 - RealmEnv's, on this stand-in
        return RealmEnv._instance_graph(self, build)


def test_per_instance_memo_keys_on_instance_and_key_identity():
    env, calls = _Memo(), []
    d1, d2 = object(), object()
    compute = lambda: calls.append(1) or len(calls)  # noqa: E731
    assert env.yardstick.memo("x", compute, d1) == 1
    assert env.yardstick.memo("x", compute, d1) == 1
    assert env.yardstick.memo("x", compute, d2) == 2  # other keys
    assert env.yardstick.memo("x", compute, d2, d1) == 3  # more keys
    env.instance = object()
    assert env.yardstick.memo("x", compute, d2, d1) == 4  # another instance


def test_per_instance_memo_never_serves_a_solved_value_while_solves_wait():
    env, calls = _Memo(), []

    def lookup() -> str:  # not shipped: found (cached or solved) only when solves may run
        calls.append(1)
        if solves_deferred():
            raise SolvePending("x")
        return "solved"

    with deferring_solves():
        with pytest.raises(SolvePending):
            env.yardstick.memo("ref", lookup)
    assert env.yardstick.memo("ref", lookup) == "solved" and len(calls) == 2
    with deferring_solves():  # as without the memo: the solved value is not used while deferred
        with pytest.raises(SolvePending):
            env.yardstick.memo("ref", lookup)
    assert env.yardstick.memo("ref", lookup) == "solved" and len(calls) == 3  # kept for the solving path
    found_deferred = []
    with deferring_solves():
        assert env.yardstick.memo("cheap", lambda: found_deferred.append(1) or 7) == 7
    assert env.yardstick.memo("cheap", lambda: found_deferred.append(1) or 8) == 7  # valid either way
    assert len(found_deferred) == 1


def test_instance_graph_is_built_once_per_instance():
    env, built = _Memo(), []
    build = lambda: built.append(nx.DiGraph()) or built[-1]  # noqa: E731
    g = env._instance_graph(build)
    assert env._instance_graph(build) is g and len(built) == 1
    env.instance = object()
    assert env._instance_graph(build) is not g and len(built) == 2


def test_clipped_matches_np_clip():
    values = [-5, 0, 3, 2881, 10**7]
    for low, high in ((-1, 2880), (0, 2880)):
        expected = np.clip(values, low, high).astype(np.float32)
        got = clipped(values, low, high)
        assert got.dtype == np.float32 and got.tolist() == expected.tolist()
    assert np.isnan(clipped([float("nan")], 0, 1)[0])
    assert clipped([], 0, 1).shape == (0,)
