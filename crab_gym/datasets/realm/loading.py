"""One instance loader for every REALM problem: shipped name | JSON path | mapping | object.

P1-P4 accept the same four kinds of ``instance`` and must report a bad one the same way
(:class:`~crab_gym.datasets.errors.InstanceFormatError` naming the file, and the field or
JSON line), so the resolution and error handling live here once; each problem module only
says how to turn a parsed mapping into its instance (its own JSON or an upstream file).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from crab_gym.datasets.errors import InstanceFormatError

M = TypeVar("M", bound=BaseModel)

#: How a mapping whose source is not a file is named in errors.
MAPPING_SOURCE = "<mapping>"


def shipped_names(instance_dir: Path, prefix: str) -> list[str]:
    """Stems of the shipped ``<prefix>_*.json`` files in ``instance_dir``, sorted."""
    return sorted(p.stem for p in instance_dir.glob(f"{prefix}_*.json"))


def read_json(path: Path) -> Any:
    """Parse a JSON file, turning syntax errors into :class:`InstanceFormatError`."""
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InstanceFormatError(path.name, f"invalid JSON: {exc.msg}", line=exc.lineno) from exc
    except OSError as exc:
        raise InstanceFormatError(str(path), f"cannot read the file: {exc.strerror}") from exc


def validate_model(model: type[M], data: Any, source: str) -> M:
    """``model.model_validate`` with errors as :class:`InstanceFormatError` (first field named)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise InstanceFormatError(source, err.get("msg", "invalid"), field=field) from exc


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
