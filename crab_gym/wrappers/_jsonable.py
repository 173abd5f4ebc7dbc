"""JSON helpers shared by the trajectory logger, its reader and the Minari export.

Two encodings, because they serve two purposes:

* :func:`to_jsonable` is *lossy* and never fails: ``info`` dicts, metrics and summaries only
  need to be readable (numpy values become plain numbers and lists, anything unknown its
  ``repr``).
* :func:`encode_value` / :func:`decode_value` are *lossless* for what a Gymnasium action can
  be (numpy arrays and scalars, tuples, dicts, strings), so that a replay feeds the env the
  very same action. Tagged objects use keys starting with ``__``.

:func:`digest` hashes an observation canonically (dtype, shape and bytes of arrays, sorted
dict keys), so a replay can check the observation without storing it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def to_jsonable(x: Any, _depth: int = 0) -> Any:
    """A JSON-compatible copy of ``x`` (lossy, never raises)."""
    if _depth > 64:
        return repr(x)
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float, np.bool_, np.integer, np.floating)):
        return _number(x)
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist(), _depth + 1)
    if isinstance(x, Mapping):
        return {str(k): to_jsonable(v, _depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v, _depth + 1) for v in x]
    if isinstance(x, (set, frozenset)):
        items = [to_jsonable(v, _depth + 1) for v in x]
        try:
            return sorted(items)
        except TypeError:
            return items
    return _object(x, _depth)


def _number(x: int | float | np.bool_ | np.integer | np.floating) -> Any:
    """A Python or numpy number as a plain JSON number (non-finite floats as strings)."""
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return _float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    return _float(float(x))


def _object(x: Any, _depth: int) -> Any:
    """A pydantic model or dataclass as its fields, bytes as hex, anything else its ``repr``."""
    if hasattr(x, "model_dump"):  # pydantic models (e.g. typed disruptions)
        try:
            return to_jsonable(x.model_dump(mode="json"), _depth + 1)
        except Exception:  # pragma: no cover - exotic models
            return repr(x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return to_jsonable(dataclasses.asdict(x), _depth + 1)
    if isinstance(x, bytes):
        return x.hex()
    return repr(x)


def _float(v: float) -> float | str:
    """Finite floats stay floats; NaN and infinities become strings (strict JSON)."""
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def encode_value(x: Any) -> Any:
    """Lossless JSON form of an action (see :func:`decode_value`)."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return x if math.isfinite(x) else {"__float__": repr(x)}
    if isinstance(x, np.ndarray):
        return {"__ndarray__": to_jsonable(x.tolist()), "dtype": x.dtype.str, "shape": list(x.shape)}
    if isinstance(x, np.generic):
        return {"__np__": x.dtype.str, "value": to_jsonable(x.item())}
    if isinstance(x, tuple):
        return {"__tuple__": [encode_value(v) for v in x]}
    if isinstance(x, list):
        return [encode_value(v) for v in x]
    if isinstance(x, Mapping):
        if all(isinstance(k, str) and not k.startswith("__") for k in x):
            return {k: encode_value(v) for k, v in x.items()}
        return {"__dict__": [[encode_value(k), encode_value(v)] for k, v in x.items()]}
    return to_jsonable(x)


def decode_value(x: Any) -> Any:
    """Inverse of :func:`encode_value`."""
    if isinstance(x, list):
        return [decode_value(v) for v in x]
    if not isinstance(x, dict):
        return x
    if "__ndarray__" in x:
        return np.array(x["__ndarray__"], dtype=np.dtype(x["dtype"])).reshape(x["shape"])
    if "__np__" in x:
        return np.array(x["value"], dtype=np.dtype(x["__np__"]))[()]
    if "__tuple__" in x:
        return tuple(decode_value(v) for v in x["__tuple__"])
    if "__float__" in x:
        return float(x["__float__"])
    if "__dict__" in x:
        return {decode_value(k): decode_value(v) for k, v in x["__dict__"]}
    return {k: decode_value(v) for k, v in x.items()}


def digest(x: Any) -> str:
    """A short canonical hash of an observation (or any nest of arrays, dicts and scalars)."""
    h = hashlib.sha256()
    _feed(h, x)
    return h.hexdigest()[:20]


def _feed(h: Any, x: Any) -> None:
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        arr = np.ascontiguousarray(x)
        h.update(b"A" + arr.dtype.str.encode() + repr(arr.shape).encode())
        if arr.dtype.kind == "O":
            for item in arr.reshape(-1):
                _feed(h, item)
        else:
            h.update(arr.tobytes())
    elif isinstance(x, Mapping):
        h.update(b"{")
        for k in sorted(x, key=str):
            _feed(h, str(k))
            _feed(h, x[k])
        h.update(b"}")
    elif isinstance(x, (list, tuple)):
        h.update(b"[" if isinstance(x, list) else b"(")
        for v in x:
            _feed(h, v)
        h.update(b"]")
    elif isinstance(x, str):
        data = x.encode("utf-8", "surrogatepass")
        h.update(b"s" + str(len(data)).encode() + b":" + data)
    elif isinstance(x, bytes):
        h.update(b"b" + str(len(x)).encode() + b":" + x)
    else:
        h.update(b"r" + repr(x).encode())
