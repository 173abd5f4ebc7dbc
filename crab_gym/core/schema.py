"""Normalise pydantic's JSON schemas into the flat form tool-calling APIs accept.

Pydantic emits ``$ref``/``$defs`` for enums and nested models, ``title`` everywhere and
``const`` for one-value literals. Several LLM providers reject or mis-handle references, so
we inline every reference, drop titles and turn ``const`` into a one-value ``enum``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return an inlined copy of a pydantic JSON schema (no ``$ref``, ``$defs`` or titles)."""
    defs = schema.get("$defs", {})
    return _clean(copy.deepcopy(schema), defs, depth=0)


def _clean(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if depth > 50:
        raise ValueError("schema nesting is too deep (recursive model?)")
    if isinstance(node, list):
        return [_clean(item, defs, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    node.pop("$defs", None)
    if "$ref" in node:
        target = _resolve(node.pop("$ref"), defs)
        node = {**target, **node}
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        node.pop("allOf")
        node = {**_clean(all_of[0], defs, depth + 1), **node}
    if "const" in node and "enum" not in node:
        node["enum"] = [node.pop("const")]
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(sub, defs, depth + 1) for name, sub in value.items()}
        else:
            out[key] = _clean(value, defs, depth + 1)
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


def _resolve(ref: str, defs: dict[str, Any]) -> dict[str, Any]:
    prefix = "#/$defs/"
    if not ref.startswith(prefix) or ref[len(prefix) :] not in defs:
        raise ValueError(f"cannot resolve schema reference {ref!r}")
    return copy.deepcopy(defs[ref[len(prefix) :]])


def emptiest_arguments(schema: Mapping[str, Any]) -> Any:
    """The emptiest value a JSON schema allows: every list empty, every object with its
    properties emptied (a plan that does nothing)."""
    kind = schema.get("type")
    if kind == "array":
        return []
    if kind == "object" or "properties" in schema:
        return {name: emptiest_arguments(sub) for name, sub in schema.get("properties", {}).items()}
    if "default" in schema:
        return schema["default"]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if "enum" in schema:
        return schema["enum"][0]
    return None
