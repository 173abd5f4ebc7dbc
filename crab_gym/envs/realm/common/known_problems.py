"""The problems' records as the problem index last read them, for code below the index.

An env's own problem record (``ProblemSpec``) holds what the family declares about it -- for
renaming (:mod:`.obfuscation`), which fields hold names. Code in ``realm.common`` may not import
the index (it sits above), so the index writes the records here when it reads the families'
``spec.py`` (as it writes the upstream detection table into :mod:`.upstream`), and
:func:`problem_of` finds an env's record: by its id, else by its class.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from crab_gym.envs.realm.common.problem_spec import ProblemSpec

#: The records by env id (``Realm-P3-v0``), written by :func:`use_problem_specs`.
_PROBLEMS: dict[str, ProblemSpec] = {}


def use_problem_specs(specs: Iterable[ProblemSpec]) -> None:
    """Set the records (the problem index calls it whenever its families change)."""
    _PROBLEMS.clear()
    _PROBLEMS.update({spec.env_id: spec for spec in specs})


def problem_of(env: Any) -> ProblemSpec | None:
    """The record of ``env``'s problem: by its id (``gym.make``), else by its class or the
    nearest class it derives from (an env built directly, a subclass); None: no REALM problem."""
    base = env.unwrapped
    spec = getattr(base, "spec", None)
    if spec is not None and spec.id in _PROBLEMS:
        return _PROBLEMS[spec.id]
    by_class = {problem.entry_point("env"): problem for problem in _PROBLEMS.values()}
    for cls in type(base).__mro__:
        found = by_class.get(f"{cls.__module__}:{cls.__qualname__}")
        if found is not None:
            return found
    return None
