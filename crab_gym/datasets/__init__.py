"""Instances of every REALM problem, by problem: a facade over the family packages.

>>> from crab_gym.datasets import list_instances, load_instance
>>> list_instances("P11")[:3]
['abz5', 'abz6', 'abz7']
>>> load_instance("P1", "p1_small_00").name
'p1_small_00'

``load_realm_instance(path)`` reads a user's own copy of an upstream REALM-Bench file (P1-P10),
whichever problem it holds; ``InstanceFormatError`` is what every malformed file raises.
:mod:`crab_gym.datasets.jssp` keeps the job-shop names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from crab_gym.datasets.upstream import load_realm_instance
from crab_gym.envs.realm.campus_tour.formats import load_p1, shipped_p1_names
from crab_gym.envs.realm.campus_tour.generator import generate_p1
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.disaster_relief.formats import load_p7, shipped_p7_names
from crab_gym.envs.realm.disaster_relief.generator import generate_p7
from crab_gym.envs.realm.group_tours.formats import load_p2, shipped_p2_names
from crab_gym.envs.realm.group_tours.generator import generate_p2
from crab_gym.envs.realm.jobshop.generator import random_instance
from crab_gym.envs.realm.jobshop.library import list_jssp_instances, load_jssp_instance
from crab_gym.envs.realm.ridesharing.formats import load_p3, load_p4, shipped_p3_names, shipped_p4_names
from crab_gym.envs.realm.ridesharing.generator import generate_p3, generate_p4
from crab_gym.envs.realm.supply_chain.formats import load_p10, shipped_p10_names
from crab_gym.envs.realm.supply_chain.generator import generate_p10
from crab_gym.envs.realm.thanksgiving.formats import load_p6, load_p9, shipped_p6_names, shipped_p9_names
from crab_gym.envs.realm.thanksgiving.generator import generate_p6, generate_p9
from crab_gym.envs.realm.wedding.formats import load_p5, load_p8, shipped_p5_names, shipped_p8_names
from crab_gym.envs.realm.wedding.generator import generate_p5, generate_p8

#: problem -> (list shipped names, load a name/path/mapping/object, draw a seeded instance)
PROBLEMS: dict[str, tuple[Callable[[], list[str]], Callable[[Any], Any], Callable[..., Any]]] = {
    "P1": (shipped_p1_names, load_p1, generate_p1),
    "P2": (shipped_p2_names, load_p2, generate_p2),
    "P3": (shipped_p3_names, load_p3, generate_p3),
    "P4": (shipped_p4_names, load_p4, generate_p4),
    "P5": (shipped_p5_names, load_p5, generate_p5),
    "P6": (shipped_p6_names, load_p6, generate_p6),
    "P7": (shipped_p7_names, load_p7, generate_p7),
    "P8": (shipped_p8_names, load_p8, generate_p8),
    "P9": (shipped_p9_names, load_p9, generate_p9),
    "P10": (shipped_p10_names, load_p10, generate_p10),
    "P11": (list_jssp_instances, load_jssp_instance, random_instance),
}


def _problem(problem: str) -> tuple[Callable[[], list[str]], Callable[[Any], Any], Callable[..., Any]]:
    key = str(problem).upper()
    if key not in PROBLEMS:
        raise KeyError(f"unknown REALM problem {problem!r}; choose one of {', '.join(PROBLEMS)}")
    return PROBLEMS[key]


def list_instances(problem: str) -> list[str]:
    """The names of a problem's shipped instances (``"P1"`` .. ``"P11"``)."""
    return _problem(problem)[0]()


def load_instance(problem: str, instance: str | Path | dict | Any) -> Any:
    """A problem's instance from a shipped name, a file (ours or upstream), a mapping or itself."""
    return _problem(problem)[1](instance)


def generate_instance(problem: str, *args: Any, **kwargs: Any) -> Any:
    """A seeded instance from the problem's generator (its own arguments: size, seed, ...)."""
    return _problem(problem)[2](*args, **kwargs)


__all__ = [
    "PROBLEMS",
    "InstanceFormatError",
    "RealmRepairWarning",
    "generate_instance",
    "list_instances",
    "load_instance",
    "load_realm_instance",
]
