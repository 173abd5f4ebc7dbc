"""P10's disruptions as the disruption protocol (:mod:`crab_gym.envs.realm.common.disruptions`)
sees them: a mapping with ``type``, where it strikes, ``start`` (a day; None: now) and
``duration`` (days).

===================== ====================================== ==========================================
type                  strikes                                effect
===================== ====================================== ==========================================
``resource_shortage`` ``component`` (or ``location``), an    orders of the component get ``1 - shortage``
                      optional ``supplier``; ``shortage`` in  of the supplier's capacity (default 0.4)
                      (0, 1]
``machine_breakdown`` ``facility`` (or ``location``)         the stage makes nothing
===================== ====================================== ==========================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from crab_gym.envs.realm.common.disruptions import DisruptionKind, InvalidDisruptionError
from crab_gym.envs.realm.supply_chain.model import STAGES, Breakdown, P10Instance, Shortage

#: The types P10 knows, in a fixed order; both strike a place (a component or a facility).
DISRUPTION_KINDS: dict[str, DisruptionKind] = {
    "resource_shortage": DisruptionKind("location", has_delay=False),
    "machine_breakdown": DisruptionKind("location", has_delay=False),
}

#: The shortage a ``resource_shortage`` without one cuts (upstream's 40 %).
DEFAULT_SHORTAGE = 0.4


def parse_disruption(d: Any, inst: P10Instance) -> Shortage | Breakdown:
    """A typed disruption from a mapping (or a typed one), checked against ``inst``."""
    if isinstance(d, (Shortage, Breakdown)):
        data: dict[str, Any] = d.model_dump()
    elif isinstance(d, Mapping):
        data = dict(d)
    else:
        raise InvalidDisruptionError(f"a disruption is a mapping with 'type', got {type(d).__name__}")
    kind = data.get("type")
    if kind not in DISRUPTION_KINDS:
        raise InvalidDisruptionError(f"unknown disruption type {kind!r}; known: {', '.join(DISRUPTION_KINDS)}")
    place = data.pop("location", None)
    data.pop("delay", None)
    try:
        if kind == "resource_shortage":
            data.setdefault("component", place)
            data.setdefault("shortage", DEFAULT_SHORTAGE)
            out: Shortage | Breakdown = Shortage.model_validate(data)
            if out.component not in inst.component_names:
                raise InvalidDisruptionError(f"unknown component {out.component!r}; known: "
                                             f"{', '.join(inst.component_names)}")
            if out.supplier is not None and out.supplier not in inst.supplier_ids:
                raise InvalidDisruptionError(f"unknown supplier {out.supplier!r}; known: {', '.join(inst.supplier_ids)}")
        else:
            data.setdefault("facility", place)
            out = Breakdown.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        hint = f" (facilities: {', '.join(STAGES)})" if "facility" in where else ""
        raise InvalidDisruptionError(f"{kind}: {where}: {err.get('msg')}{hint}") from None
    return out


def disruption_to_json(d: Shortage | Breakdown) -> dict[str, Any]:
    """A disruption as ``info`` reports it."""
    return d.model_dump()
