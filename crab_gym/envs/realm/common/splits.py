"""A problem's instance splits: frozen lists of shipped instance names, declared in its spec.

A benchmark number describes a set, so every problem declares the sets its numbers are given
on (``ProblemSpec.splits``):

* ``dev``: for tuning, training-time evaluation and prompt development;
* ``test``: for the numbers people publish (the reference results are given on it); disjoint
  from ``dev``;
* ``quick``: a few ``dev`` instances, one per size class where the problem has them: what
  ``crab-gym run`` plays when no split is named;
* more named sets where a problem has them (P11's literature families ``ft``, ``la``, ``ta``).

The size classes (``small``, ``medium``, ``large``; P10's ``late``) are splits too, read from
the names; the resolver (:mod:`crab_gym.datasets.splits`) adds them and a user's own folder.
The lists are literal on purpose: a split is part of what a published number means, so it
changes only by an edit someone reviews, never because an instance was added.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: The size classes a shipped instance name carries (``p1_small_03``), in report order.
SIZE_CLASSES = ("small", "medium", "large", "late")
#: The names a problem may not give to one of its own sets (the resolver's split names).
RESERVED = frozenset({"dev", "test", "quick", "all", *SIZE_CLASSES})
_SIZE_IN_NAME = re.compile(r"_(" + "|".join(SIZE_CLASSES) + r")_\d+$")


def size_in_name(name: str) -> str | None:
    """The size class a shipped name carries (``p3_medium_02`` -> ``medium``), else None."""
    found = _SIZE_IN_NAME.search(name)
    return found.group(1) if found else None


@dataclass(frozen=True)
class Splits:
    """The frozen instance lists of one problem (see the module docstring).

    Args:
        dev: instances for development; disjoint from ``test``.
        test: instances for published numbers.
        quick: the default run's instances, a subset of ``dev``.
        sets: further named sets (``{"ta": (...)}``), each of shipped names.
        description: how the lists were drawn (generator seeds, the rule): shown by
            ``crab-gym list --splits`` and in ``docs/results.md``.
    """

    dev: tuple[str, ...]
    test: tuple[str, ...]
    quick: tuple[str, ...]
    sets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        overlap = sorted(set(self.dev) & set(self.test))
        if overlap:
            raise ValueError(f"dev and test must be disjoint; both hold {', '.join(overlap)}")
        stray = sorted(set(self.quick) - set(self.dev))
        if stray:
            raise ValueError(f"quick must be a subset of dev; {', '.join(stray)} is not in dev")
        clash = sorted(set(self.sets) & RESERVED)
        if clash:
            raise ValueError(f"set names {', '.join(clash)} are reserved for the resolver's splits")
        object.__setattr__(self, "sets", MappingProxyType({k: tuple(v) for k, v in self.sets.items()}))

    def named(self) -> dict[str, tuple[str, ...]]:
        """Every declared list by name: dev, test, quick, then the extra sets."""
        return {"dev": self.dev, "test": self.test, "quick": self.quick, **self.sets}


def numbered(prefix: str, **classes: tuple[int, ...]) -> tuple[str, ...]:
    """Shipped names by size class and number: ``numbered("p1", small=(0, 3))`` is
    ``("p1_small_00", "p1_small_03")``; the classes in the order given."""
    return tuple(f"{prefix}_{size}_{k:02d}" for size, ks in classes.items() for k in ks)


def every_third(names: list[str] | tuple[str, ...], description: str) -> Splits:
    """The split of the generated families: in each size class (small to large, by number),
    the 1st, 4th, 7th, ... instance is ``dev`` and the others ``test``; ``quick`` is the first
    two ``dev`` instances of the smallest class and the first of the next. Used once to write
    each spec's literal lists (a test checks that they still agree with it)."""
    by_class: dict[str, list[str]] = {}
    for name in names:
        by_class.setdefault(size_in_name(name) or "", []).append(name)
    order = [c for c in (*SIZE_CLASSES, "") if c in by_class]
    dev: list[str] = []
    test: list[str] = []
    for size in order:
        for i, name in enumerate(sorted(by_class[size], key=_index)):
            (dev if i % 3 == 0 else test).append(name)
    firsts = [[n for n in dev if size_in_name(n) == c] for c in order if c != "late"]
    quick = firsts[0][:2] + (firsts[1][:1] if len(firsts) > 1 else [])
    return Splits(dev=tuple(dev), test=tuple(test), quick=tuple(quick), description=description)


def _index(name: str) -> tuple[int, str]:
    tail = name.rsplit("_", 1)[-1]
    return (int(tail), name) if tail.isdigit() else (10**9, name)
