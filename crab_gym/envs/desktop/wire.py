"""How action results travel between ``crab-gym serve`` and its clients: plain JSON.

Results are JSON values, except numpy arrays (screenshots), which travel as a tagged object
holding dtype, shape and base64 bytes. Nothing is ever unpickled or evaluated, and only
``uint8`` arrays are accepted back.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

_TAG = "__ndarray__"
_MAX_ARRAY_BYTES = 64 * 1024 * 1024


def encode(value: Any) -> Any:
    """A JSON-compatible form of an action's result."""
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value, dtype=np.uint8)
        return {_TAG: {"dtype": "uint8", "shape": list(arr.shape),
                       "data": base64.b64encode(arr.tobytes()).decode("ascii")}}
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    return value


def decode(value: Any) -> Any:
    """Inverse of :func:`encode` (rejects anything but well-formed uint8 arrays)."""
    if isinstance(value, dict):
        if set(value) == {_TAG}:
            spec = value[_TAG]
            if not isinstance(spec, dict) or spec.get("dtype") != "uint8":
                raise ValueError("only uint8 arrays are accepted")
            shape = tuple(int(n) for n in spec["shape"])
            if any(n < 0 for n in shape) or len(shape) > 4:
                raise ValueError(f"bad array shape {shape}")
            raw = base64.b64decode(spec["data"], validate=True)
            if len(raw) != int(np.prod(shape)) or len(raw) > _MAX_ARRAY_BYTES:
                raise ValueError("array data does not match its shape")
            return np.frombuffer(raw, dtype=np.uint8).reshape(shape).copy()
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value
