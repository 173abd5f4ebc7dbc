"""One instance loader for every REALM problem: shipped name | JSON path | mapping | object.

P1-P4 accept the same four kinds of ``instance`` and must report a bad one the same way
(:class:`~crab_gym.envs.realm.common.errors.InstanceFormatError` naming the file, and the field or
JSON line), so the resolution and error handling live here once; each problem module only
says how to turn a parsed mapping into its instance (its own JSON or an upstream file).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from crab_gym.envs.realm.common.errors import FieldProblem, InstanceFormatError
from crab_gym.envs.realm.common.jsonfile import read_json_file

M = TypeVar("M", bound=BaseModel)

#: How a mapping whose source is not a file is named in errors.
MAPPING_SOURCE = "<mapping>"


def shipped_names(instance_dir: Path, prefix: str) -> list[str]:
    """Stems of the shipped ``<prefix>_*.json`` files in ``instance_dir``, sorted."""
    return sorted(p.stem for p in instance_dir.glob(f"{prefix}_*.json"))


def read_json(path: Path) -> Any:
    """Parse a JSON file; any unreadable content is an :class:`InstanceFormatError` naming the
    file and the field or line (see :mod:`crab_gym.envs.realm.common.jsonfile`)."""
    return read_json_file(path)


def _dotted(loc: tuple, data: Any = None) -> str:
    """A pydantic error location as a dotted path: ``("requests", 2, "pickup")`` ->
    ``requests[2].pickup``. With the validated ``data``, parts that are not in it (the tag
    pydantic adds for a tagged union, like ``construction``) are left out, except the last
    one: that is the field a "Field required" error is about, which is never in the data."""
    out, node = "", data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if data is not None and isinstance(part, str) and not last and not (isinstance(node, dict) and part in node):
            continue
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
        try:
            node = node[part] if node is not None else None
        except (KeyError, IndexError, TypeError):
            node = None
            data = None  # past the data: keep every remaining part
    return out.lstrip(".")


def validation_error(exc: ValidationError, source: str, data: Any = None) -> InstanceFormatError:
    """The first problem of a pydantic ``ValidationError`` as an :class:`InstanceFormatError`.

    A :class:`~crab_gym.envs.realm.common.errors.FieldProblem` raised by a model's own check carries
    the field below the location pydantic knows, so the two are joined.
    """
    err = exc.errors()[0]
    field = _dotted(tuple(p for p in err.get("loc", ()) if p != "__root__"), data)
    problem = str(err.get("msg", "invalid"))
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, FieldProblem):
        sub = cause.field
        field = f"{field}{'' if sub.startswith('[') or not field else '.'}{sub}"
        problem = cause.problem
    elif err.get("type") not in ("missing", "extra_forbidden") and "input" in err:
        shown = repr(err["input"])
        if len(shown) <= 40:
            problem += f", got {shown}"
    return InstanceFormatError(source, problem, field=field or None)


def validate_model(model: type[M], data: Any, source: str) -> M:
    """``model.model_validate`` with errors as :class:`InstanceFormatError` (first field named)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, source, data) from None


def instance_path(instance: str | Path, instance_dir: Path, problem: str) -> Path:
    """The shipped file a name refers to, else the path itself if it is a file.

    ``problem`` (``"P1"`` ...) names the problem in the error; the shipped files of that
    problem are ``<problem lower-case>_*.json`` in ``instance_dir``.
    """
    text = str(instance)
    shipped = instance_dir / f"{text}.json"
    if isinstance(instance, str) and shipped.is_file():
        return shipped
    path = Path(text)
    if not path.is_file():
        names = shipped_names(instance_dir, problem.lower())
        raise InstanceFormatError(
            text, f"no such file, and not a shipped {problem} instance (shipped: {', '.join(names[:3])}, ...)"
        )
    return path


def load_instance(
    instance: str | Path | dict | M,
    model: type[M],
    *,
    instance_dir: Path,
    problem: str,
    from_mapping: Callable[[Any, str], M],
) -> M:
    """``instance`` as a ``model``: itself, a mapping, a shipped name or a JSON file path.

    ``from_mapping(data, source)`` converts a parsed mapping (crab_gym's own JSON or an
    upstream file); ``source`` is the file name, or ``"<mapping>"``, for error messages.
    """
    if isinstance(instance, model):
        return instance
    if isinstance(instance, dict):
        return from_mapping(instance, MAPPING_SOURCE)
    path = instance_path(instance, instance_dir, problem)
    return from_mapping(read_json(path), path.name)
