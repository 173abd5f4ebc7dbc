"""Evaluators, their combinators, and the GraphEvaluator's cascade/latch/reset semantics."""

from __future__ import annotations

import networkx as nx
import pytest

from crab_gym.core import Evaluator, GraphEvaluator, evaluator


class Box:
    """A tiny mutable state the evaluators read through the kept ``env`` parameter."""

    def __init__(self, **flags: bool) -> None:
        self.flags = dict(flags)
        self.checked: list[str] = []


def flag(name: str) -> Evaluator:
    @evaluator(name=name)
    def check(env) -> bool:
        env.checked.append(name)
        return env.flags.get(name, False)

    return check


@evaluator
def at_least(n: int, env) -> bool:
    """At least n flags are set.

    Args:
        n: how many.
    """
    return sum(env.flags.values()) >= n


def test_combinators_short_circuit_and_forward_env():
    a, b = flag("a"), flag("b")
    env = Box(a=False, b=True)
    assert (a & b)(env=env) is False
    assert env.checked == ["a"]  # b never evaluated
    env.checked.clear()
    assert (a | b)(env=env) is True
    assert env.checked == ["a", "b"]
    env.checked.clear()
    assert (~a)(env=env) is True
    env.flags["a"] = True
    env.checked.clear()
    assert (a | b)(env=env) is True and env.checked == ["a"]


def test_combinators_merge_parameters():
    combined = at_least & ~flag("z")
    assert combined.param_names == ["n"]
    assert combined.kept_params == ("env",)
    assert combined(n=1, env=Box(a=True)) is True
    assert combined(n=2, env=Box(a=True)) is False


def test_evaluator_must_return_bool():
    with pytest.raises(TypeError, match="must return bool"):

        @evaluator
        def bad(env) -> int:
            return 1


def test_open_evaluators_are_rejected_in_graphs():
    g = nx.DiGraph()
    g.add_node(at_least)
    with pytest.raises(ValueError, match="bind"):
        GraphEvaluator(g)
    g2 = nx.DiGraph()
    g2.add_node(at_least.bind(n=1))
    assert GraphEvaluator(g2).total == 1


def test_cycle_is_rejected():
    a, b = flag("a"), flag("b")
    g = nx.DiGraph([(a, b), (b, a)])
    with pytest.raises(ValueError, match="cycle"):
        GraphEvaluator(g)


def test_diamond_only_checks_nodes_whose_predecessors_passed():
    s, left, r, t = flag("s"), flag("left"), flag("r"), flag("t")
    ge = GraphEvaluator(nx.DiGraph([(s, left), (s, r), (left, t), (r, t)]))
    env = Box(left=True, r=True, t=True)  # s not yet true
    assert ge.step(env) == []
    assert env.checked == ["s"]  # nothing downstream of an unpassed node is checked
    assert ge.completeness == 0.0
    env.flags["s"] = True
    env.flags["r"] = False
    env.checked.clear()
    passed = ge.step(env)
    assert [n.name for n in passed] == ["s", "left"]
    assert "t" not in env.checked  # t waits for r
    assert ge.completeness == 0.5 and not ge.is_complete
    env.flags["r"] = True
    assert [n.name for n in ge.step(env)] == ["r", "t"]
    assert ge.is_complete and ge.completeness == 1.0
    assert ge.steps_to_complete == 3


def test_cascade_in_one_step():
    nodes = [flag(c) for c in "abcd"]
    g = nx.DiGraph()
    nx.add_path(g, nodes)
    ge = GraphEvaluator(g)
    env = Box(a=True, b=True, c=True, d=True)
    assert [n.name for n in ge.step(env)] == ["a", "b", "c", "d"]
    assert ge.is_complete and ge.steps_to_complete == 1


def test_passed_nodes_latch_and_reset_clears():
    a, b = flag("a"), flag("b")
    ge = GraphEvaluator(nx.DiGraph([(a, b)]))
    env = Box(a=True)
    ge.step(env)
    env.flags["a"] = False  # undone in the world...
    env.checked.clear()
    ge.step(env)
    assert a in ge.passed  # ...but the sub-goal stays passed
    assert env.checked == ["b"]  # and is not re-checked
    ge.reset()
    assert ge.passed == set() and ge.completeness == 0.0 and ge.steps_to_complete is None
    env.checked.clear()
    ge.step(env)
    assert env.checked == ["a"] and ge.completeness == 0.0


def test_require_submit_nodes_wait_for_submit():
    @evaluator(name="answer_ok", require_submit=True)
    def answer_ok(env) -> bool:
        return True

    ge = GraphEvaluator(nx.DiGraph([(flag("a"), answer_ok)]))
    env = Box(a=True)
    ge.step(env)
    assert ge.completeness == 0.5
    ge.submit()
    ge.step(env)
    assert ge.is_complete
