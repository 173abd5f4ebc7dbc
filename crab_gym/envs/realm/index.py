"""The index of REALM problems: one line per family, the only list of problems there is.

Registration, the datasets facade, upstream detection, the policy registry, the contract and
scoring checks, the multi-agent tests and the lowest-versions CI pass all read it. Adding a
problem is its folder (with a ``spec.py`` holding a ``SPECS`` tuple of
:class:`~crab_gym.envs.realm.common.problem_spec.ProblemSpec`) and one line here; see
``docs/adding-a-problem.md``.

Reading the index imports each family's ``spec.py`` only: records of dotted paths, so that
``import crab_gym`` stays cheap and loads no OR-Tools.
"""

from __future__ import annotations

import functools
import importlib

from crab_gym.envs.realm.common.known_problems import use_problem_specs
from crab_gym.envs.realm.common.problem_spec import ProblemSpec
from crab_gym.envs.realm.common.upstream import use_problem_keys

#: The families' spec modules, one line each.
FAMILIES: tuple[str, ...] = (
    "crab_gym.envs.realm.campus_tour.spec",
    "crab_gym.envs.realm.group_tours.spec",
    "crab_gym.envs.realm.ridesharing.spec",
    "crab_gym.envs.realm.wedding.spec",
    "crab_gym.envs.realm.thanksgiving.spec",
    "crab_gym.envs.realm.disaster_relief.spec",
    "crab_gym.envs.realm.supply_chain.spec",
    "crab_gym.envs.realm.jobshop.spec",
)

#: Families added at run time (:func:`add_family`), after the shipped ones.
_EXTRA: list[str] = []


def _problem_number(spec: ProblemSpec) -> tuple[int, int, str]:
    """By number; the job-shop variants J2, J3, J4 right after P11 (REALM-Bench's J1)."""
    digits = "".join(ch for ch in spec.problem if ch.isdigit())
    number = int(digits) if digits else 10**6
    if spec.problem.startswith("J"):
        return (11, number, spec.problem)
    return (number, 0, spec.problem)


@functools.cache
def _specs(families: tuple[str, ...]) -> tuple[ProblemSpec, ...]:
    specs: list[ProblemSpec] = []
    for module in families:
        specs.extend(importlib.import_module(module).SPECS)
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.problem in seen:
            raise ValueError(f"problem {spec.problem} is declared twice: in {seen[spec.problem]} and {spec.package}")
        seen[spec.problem] = spec.package
    return tuple(sorted(specs, key=_problem_number))


#: The families the upstream detection table was last set for.
_DETECTION_FOR: list[tuple[str, ...]] = []


def problem_specs() -> tuple[ProblemSpec, ...]:
    """Every problem's record, in problem order (P1, P2, ..., P11, then J2, J3, J4)."""
    families = FAMILIES + tuple(_EXTRA)
    specs = _specs(families)
    if _DETECTION_FOR != [families]:  # the families changed: upstream detection follows
        use_problem_keys(_detection_order(specs), frozenset(k for s in specs for k in s.upstream_marks))
        use_problem_specs(specs)  # what each declares (renaming reads its name fields)
        _DETECTION_FOR[:] = [families]
    return specs


def problem_spec(key: str) -> ProblemSpec:
    """The record of a problem, by name (``"P3"``, ``"p3"``) or env id (``"Realm-P3-v0"``)."""
    wanted = str(key).upper()
    for spec in problem_specs():
        if wanted in (spec.problem.upper(), spec.env_id.upper()):
            return spec
    known = ", ".join(s.problem for s in problem_specs())
    raise KeyError(f"unknown REALM problem {key!r}; choose one of {known}")


def add_family(module: str) -> tuple[ProblemSpec, ...]:
    """Add a family's spec module to the index at run time (a problem of one's own, or a
    test's toy problem) and return its records; idempotent. Register its ids with
    :func:`crab_gym.envs.registration.add_family`, which calls this."""
    if module not in FAMILIES and module not in _EXTRA:
        _EXTRA.append(module)
    problem_specs()
    return tuple(importlib.import_module(module).SPECS)


def remove_family(module: str) -> None:
    """Take a family added with :func:`add_family` out of the index again (upstream detection
    follows); the shipped families cannot be removed."""
    if module in FAMILIES:
        raise ValueError(f"{module} is a shipped family of the index; only families added at run time can be removed")
    if module in _EXTRA:
        _EXTRA.remove(module)
    problem_specs()  # sets upstream detection for the families that remain


def upstream_problem_keys() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(problem, keys)`` of every problem read from upstream files, in detection order."""
    return _detection_order(problem_specs())


def _detection_order(specs: tuple[ProblemSpec, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A problem whose keys extend another's (P4 = P3 + ``disruptions``) comes before it."""
    found = [(s.problem, s.upstream_keys) for s in specs if s.upstream is not None]
    ordered: list[tuple[str, tuple[str, ...]]] = []
    for problem, keys in reversed(found):
        extends = [i for i, (_, k) in enumerate(ordered) if set(keys) > set(k)]
        ordered.insert(min(extends, default=len(ordered)), (problem, keys))
    return tuple(ordered)
