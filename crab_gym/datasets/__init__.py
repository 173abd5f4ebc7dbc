"""Instances of every REALM problem, by problem: a facade over the family packages.

>>> from crab_gym.datasets import list_instances, load_instance
>>> list_instances("P11")[:3]
['abz5', 'abz6', 'abz7']
>>> load_instance("P1", "p1_small_00").name
'p1_small_00'

``load_realm_instance(path)`` reads a user's own copy of an upstream REALM-Bench file (P1-P10,
J2-J4, or a J1 job-shop text, which is P11), whichever problem it holds; ``InstanceFormatError``
is what every malformed file raises.
:mod:`crab_gym.datasets.jssp` keeps the job-shop names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crab_gym.datasets.upstream import load_realm_instance
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.problem_spec import ProblemSpec
from crab_gym.envs.realm.index import problem_spec, problem_specs


def _problem(problem: str) -> ProblemSpec:
    """The index's record of ``problem`` (``"P3"``); KeyError naming the problems there are."""
    return problem_spec(problem)


def list_instances(problem: str) -> list[str]:
    """The names of a problem's shipped instances (``"P1"`` .. ``"P11"``)."""
    return _problem(problem).part("names")()


def load_instance(problem: str, instance: str | Path | dict | Any) -> Any:
    """A problem's instance from a shipped name, a file (ours or upstream), a mapping or itself."""
    return _problem(problem).part("load")(instance)


def generate_instance(problem: str, *args: Any, **kwargs: Any) -> Any:
    """A seeded instance from the problem's generator (its own arguments: size, seed, ...)."""
    return _problem(problem).part("generate")(*args, **kwargs)


def problems() -> list[str]:
    """The problems there are (``["P1", ..., "P11"]``), from the problem index."""
    return [spec.problem for spec in problem_specs()]


def __getattr__(name: str) -> Any:
    if name == "PROBLEMS":  # problem -> (list names, load, generate), read from the index
        return {s.problem: (s.part("names"), s.part("load"), s.part("generate")) for s in problem_specs()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROBLEMS",
    "problems",
    "InstanceFormatError",
    "RealmRepairWarning",
    "generate_instance",
    "list_instances",
    "load_instance",
    "load_realm_instance",
]
