"""What a learned dispatcher sees of a P3/P4 state: one feature row per ``dispatch`` and ``park``.

Reads only the env's observation (the vehicles' places, free minutes, loads and capacities,
the requests' status, places and times, the travel times in force, the mask, and P4's
``disrupted_roads`` when present), so the same code serves both ids, ``gym.make`` and a trained
model playing through ``crab-gym run``.

**Rows.** The flat actions of ``DiscreteActions`` are ``dispatch`` row-major over ``(vehicle,
stop)`` (stop ``2r`` picks request ``r`` up, ``2r + 1`` drops it off): row ``v * 2R + s``; then
``park(v)``: row ``2RV + v``.

**Candidates** (:func:`dispatch_mask`): the legal rows, without a vehicle's ``park`` while it has
a legal dispatch: parking ends the vehicle's route for good, and every request left unserved
costs 5000 minutes (the greedy rule parks only when nothing else is legal).

**Features** (``FEATURE_NAMES``; minutes in units of the city's mean trip between the
requests' places): legality; park, pickup or dropoff; the drive there; the wait there for the
window; when service would begin relative to the clock, and relative to the soonest service
among the vehicle's legal stops (the greedy rule's key); the slack to the stop's deadline (a
pickup's window close, a dropoff's latest dropoff); for a pickup, the direct ride to its
dropoff and the slack left to drop it directly; how much sooner the nearest other vehicle still
on the road could reach the place; the vehicle's load over its capacity; the share of requests
still waiting, on board anywhere, and the share of stops legal for the vehicle; whether the
drive uses a disrupted road (P4).
"""

from __future__ import annotations

import numpy as np

#: The columns of :func:`dispatch_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "is_park",
    "is_pickup",
    "is_dropoff",
    "drive",
    "wait",
    "service_from_now",
    "service_over_soonest",
    "deadline_slack",
    "direct_ride",
    "direct_slack",
    "other_vehicle_sooner",
    "load_share",
    "waiting_share",
    "onboard_share",
    "legal_share",
    "disrupted_road",
)
N_FEATURES = len(FEATURE_NAMES)

#: Relative times are clipped to this many mean trips (then divided by it).
_HORIZON = 8.0


def _rel(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -_HORIZON, _HORIZON) / _HORIZON


def dispatch_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(2RV + V, N_FEATURES)`` float32 rows in flat-action order (see the module doc)."""
    legal = np.asarray(obs["action_mask"], dtype=bool)
    clock = float(np.asarray(obs["clock"]).reshape(-1)[0])
    loc = np.asarray(obs["vehicle_location"]).astype(np.int64)
    free = np.asarray(obs["vehicle_free_at"], dtype=np.float64)
    load = np.asarray(obs["vehicle_load"], dtype=np.float64)
    capacity = np.asarray(obs["vehicle_capacity"], dtype=np.float64)
    parked = np.asarray(obs["vehicle_parked"], dtype=bool)
    status = np.asarray(obs["request_status"]).astype(np.int64)
    places = np.asarray(obs["request_places"]).astype(np.int64).reshape(-1, 2)  # flat through DiscreteActions
    times = np.asarray(obs["request_times"], dtype=np.float64)
    travel = np.asarray(obs["travel_time"], dtype=np.float64)
    V, R = loc.shape[0], status.shape[0]
    S = 2 * R
    trips = travel[np.ix_(places.reshape(-1), places.reshape(-1))]
    scale = float(trips[trips > 0].mean()) if (trips > 0).any() else 1.0

    stop_place = places.reshape(-1)  # stop 2r: pickup place, 2r + 1: dropoff place
    pickup = np.arange(S) % 2 == 0
    opens = np.where(pickup, np.repeat(times[:, 0], 2), -np.inf)
    deadline = np.where(pickup, np.repeat(times[:, 1], 2), np.repeat(times[:, 2], 2))
    drive = travel[np.ix_(loc, stop_place)]  # (V, S)
    arrive = free[:, None] + drive
    service = np.maximum(arrive, opens[None, :])
    dlegal = legal[: V * S].reshape(V, S)

    f = np.zeros((V, S, N_FEATURES), dtype=np.float32)
    f[..., 0] = dlegal
    f[..., 2] = pickup[None, :]
    f[..., 3] = ~pickup[None, :]
    f[..., 4] = _rel(drive / scale)
    f[..., 5] = _rel((service - arrive) / scale)
    f[..., 6] = _rel((service - clock) / scale)
    soonest = np.where(dlegal, service, np.inf).min(axis=1, keepdims=True)
    soonest = np.where(np.isfinite(soonest), soonest, clock)
    f[..., 7] = _rel((service - soonest) / scale)
    f[..., 8] = _rel((deadline[None, :] - service) / scale)
    direct = travel[places[:, 0], places[:, 1]]
    direct_s = np.repeat(direct, 2)
    f[..., 9] = np.where(pickup, _rel(direct_s / scale), 0.0)[None, :]
    latest = np.repeat(times[:, 2], 2)
    f[..., 10] = np.where(pickup[None, :], _rel((latest[None, :] - service - direct_s[None, :]) / scale), 0.0)
    # the nearest other vehicle on the road: how much sooner it could be there
    if V > 1:
        reach = np.where(parked[:, None], np.inf, arrive)  # (V, S)
        order = np.sort(reach, axis=0)
        best, second = order[0], order[1]
        other = np.where(reach == best[None, :], second[None, :], best[None, :])
        gap = np.where(np.isfinite(other), arrive - other, -_HORIZON * scale)
        f[..., 11] = _rel(gap / scale)
    else:
        f[..., 11] = -1.0
    f[..., 12] = (load / np.maximum(capacity, 1.0))[:, None]
    f[..., 13] = (status == 0).sum() / max(1, R)
    f[..., 14] = (status == 1).sum() / max(1, R)
    f[..., 15] = (dlegal.sum(axis=1) / max(1, S))[:, None]
    if "disrupted_roads" in obs:
        roads = np.asarray(obs["disrupted_roads"], dtype=bool)
        f[..., 16] = roads[np.ix_(loc, stop_place)]

    park = np.zeros((V, N_FEATURES), dtype=np.float32)
    park[:, 0] = legal[V * S: V * S + V]
    park[:, 1] = 1.0
    park[:, 12] = load / np.maximum(capacity, 1.0)
    park[:, 13] = f[0, 0, 13]
    park[:, 14] = f[0, 0, 14]
    park[:, 15] = dlegal.sum(axis=1) / max(1, S)
    return np.concatenate([f.reshape(V * S, N_FEATURES), park], axis=0)


def dispatch_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The legal rows, without a vehicle's ``park`` while it has a legal dispatch."""
    legal = np.asarray(obs["action_mask"], dtype=bool).copy()
    V = np.asarray(obs["vehicle_location"]).shape[0]
    S = 2 * np.asarray(obs["request_status"]).shape[0]
    busy = legal[: V * S].reshape(V, S).any(axis=1)
    legal[V * S: V * S + V] &= ~busy
    return legal
