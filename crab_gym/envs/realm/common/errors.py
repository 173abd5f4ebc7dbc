"""Errors and warnings shared by every instance loader and parser.

A malformed file must never surface as a bare ``KeyError`` or ``ValueError`` from deep
inside a parser: users need to know *which file*, *which field or line*, and *what was
wrong*. Every loader in :mod:`crab_gym.datasets` raises :class:`InstanceFormatError` and
reports each silent fix it makes to upstream data as a :class:`RealmRepairWarning`.
"""

from __future__ import annotations

from pathlib import Path


class InstanceFormatError(ValueError):
    """An instance file (or mapping) that cannot be used.

    The message always names the source, and the field or line when known, e.g.
    ``"p3_small.json: field 'ride_requests[2].time_window': expected two numbers, got 'x'"``.
    """

    def __init__(
        self,
        source: str | Path,
        problem: str,
        *,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self.source = str(source)
        self.field = field
        self.line = line
        self.problem = problem
        where = self.source
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f": field '{field}'"
        super().__init__(f"{where}: {problem}")


class FieldProblem(ValueError):
    """A problem with one field, raised inside a model's own checks (pydantic validators,
    dataclass ``__post_init__``) where the file is not known yet.

    ``field`` is a dotted path relative to the model (``"windows[2]"``); the loader that
    knows the file turns it into an :class:`InstanceFormatError` naming file and full path.
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class RealmRepairWarning(UserWarning):
    """A known defect of upstream REALM-Bench data that a loader repaired.

    Loaders emit one warning per repair so that users can see exactly how their
    file was changed (for example an inverted time window shifted by one hour).
    """
