"""P7's side of the disruption protocol (:mod:`crab_gym.envs.realm.common.disruptions`):
parsing and checking the disruptions users and wrappers inject.

=====================  ============================================  ===========================
type                   fields                                        effect
=====================  ============================================  ===========================
``weather_event``      ``region`` (or ``location``), ``start``,       no trip leaves for the region
                       ``duration`` (minutes)                        while it lasts
``resource_shortage``  ``resource``, ``start``, ``fraction``         ``floor(fraction * left)``
                                                                     units of the resource are lost
=====================  ============================================  ===========================

``start`` is a minute from midnight (None: now). Injected times are put on the instance's grid
(the start rounded down, the end of a block rounded up, so a block covers at least what was
asked); a start already past counts from now and a block still ends when it would have.
Only ``weather_event`` is in :data:`DISRUPTION_KINDS` (what a random process may draw): the
protocol's kinds strike a route or a location, and a shortage strikes a resource. Shortages
are injected by list.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from crab_gym.envs.realm.common.disruptions import DisruptionKind, InvalidDisruptionError
from crab_gym.envs.realm.disaster_relief.model import (
    DISRUPTION_ADAPTER,
    RESOURCES,
    P7Instance,
    ResourceShortage,
    WeatherEvent,
)

#: The disruption types a random process may draw (see the module docstring).
DISRUPTION_KINDS: dict[str, DisruptionKind] = {"weather_event": DisruptionKind("location", has_delay=False)}
DISRUPTION_TYPES = ("weather_event", "resource_shortage")


def parse_disruption(data: Any, inst: P7Instance) -> WeatherEvent | ResourceShortage:
    """A typed disruption from a mapping (or a typed one), checked against ``inst``.

    Raises :class:`InvalidDisruptionError` for an unknown type, region or resource, or bad numbers.
    """
    if isinstance(data, (WeatherEvent, ResourceShortage)):
        d = data
    else:
        if not isinstance(data, dict):
            raise InvalidDisruptionError(f"a disruption is a mapping with a 'type', got {data!r}")
        data = dict(data)
        if data.get("type") == "weather_event" and "location" in data and "region" not in data:
            data["region"] = data.pop("location")
        if data.get("type") == "weather_event":
            data.pop("delay", None)  # a random process may add one; a block has none
        try:
            d = DISRUPTION_ADAPTER.validate_python(data)
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()]
            raise InvalidDisruptionError(
                f"invalid disruption {data!r}: {'; '.join(problems)} (types: {', '.join(DISRUPTION_TYPES)})"
            ) from None
    if isinstance(d, WeatherEvent) and d.region not in inst.region_ids:
        raise InvalidDisruptionError(f"weather_event: unknown region {d.region!r}; regions: {', '.join(inst.region_ids)}")
    if isinstance(d, ResourceShortage) and d.resource not in RESOURCES:  # pragma: no cover - the model checks it
        raise InvalidDisruptionError(f"resource_shortage: unknown resource {d.resource!r}")
    return d


def on_grid(d: WeatherEvent | ResourceShortage, inst: P7Instance, now: int) -> WeatherEvent | ResourceShortage:
    """``d`` with its start filled (None: ``now``), not before ``now``, and on the grid."""
    slot = inst.slot_minutes
    start = now if d.start is None else d.start
    down = inst.start + (start - inst.start) // slot * slot
    if isinstance(d, ResourceShortage):
        return d.model_copy(update={"start": max(now, down)})
    end = start + d.duration
    up = inst.start + -(-(end - inst.start) // slot) * slot
    begin = max(now, down)
    return d.model_copy(update={"start": begin, "duration": max(0, up - begin)})
