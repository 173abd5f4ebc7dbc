"""What a learned P5/P8 dispatcher sees: one feature row per flat action of the env.

The rows follow ``DiscreteActions``' flat order: every ``drive`` ``(vehicle, stop)`` pair
(vehicle-major; stops are the guests, the errands, then ``dropoff:venue``), then every
``wait`` (one per vehicle), then every ``finish`` (one per vehicle). Everything is read from
the env's observation alone (``clock``, ``vehicle_*``, ``item_*``, ``travel_time``,
``action_mask``; P8's ``disrupted_roads`` is not needed: its delays are already in
``travel_time``), so the same code serves training, ``crab-gym run`` and any instance size.
The venue is place 0 (the generator's and the loader's convention; true of every shipped
instance).

**Why these features.** The greedy heuristic (:mod:`.heuristics`) sends a free vehicle to the
legal stop whose service can begin soonest; the cost is driving minutes. So a drive row says
how long the trip is, when service could begin and how long the vehicle would idle there,
how much slack the stop's window leaves, how far the stop is from the venue (the trip home),
whether another vehicle could begin it sooner (sharing the work), the detour it adds to the
drive home (``here -> stop -> venue`` minus ``here -> venue``), whether the vehicle is already
there, how many other to-do items share the stop's place (one visit to the airport can fetch
several guests; waiting is free, driving is not) and the vehicle's load and free seats;
``greedy`` marks the heuristic's own choice so that the policy starts from a strong rule and
can learn where to depart from it. Times are in units of the instance's mean travel time
(relative ones clipped to ``[-8, 8]`` units, then scaled to [-1, 1]), so small and large towns
look alike.
"""

from __future__ import annotations

import numpy as np

#: The columns of :func:`wedding_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "is_drive_item",
    "is_drive_venue",
    "is_wait",
    "is_finish",
    "travel",
    "start_delay",
    "idle_at_stop",
    "window_slack",
    "to_venue",
    "greedy",
    "start_rank",
    "other_vehicle_gain",
    "vehicle_load",
    "vehicle_has_load",
    "vehicle_capacity",
    "items_to_do",
    "items_on_board",
    "detour",
    "same_place",
    "batch_at_stop",
    "seats_left",
)
N_FEATURES = len(FEATURE_NAMES)
_HORIZON = 8.0
VENUE_PLACE = 0


def _rel(delta: np.ndarray, unit: float) -> np.ndarray:
    return np.clip(delta / unit, -_HORIZON, _HORIZON) / _HORIZON


def wedding_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(n_flat, N_FEATURES)`` float32 for one observation; see the module doc."""
    legal = np.asarray(obs["action_mask"], dtype=bool)
    clock = float(np.asarray(obs["clock"]).reshape(-1)[0])
    place = np.asarray(obs["vehicle_place"], dtype=np.int64)
    free = np.maximum(np.asarray(obs["vehicle_free_at"], dtype=np.float64), clock)
    load = np.asarray(obs["vehicle_load"], dtype=np.float64)
    cap = np.maximum(np.asarray(obs["vehicle_capacity"], dtype=np.float64), 1.0)
    finished = np.asarray(obs["vehicle_finished"], dtype=bool)
    status = np.asarray(obs["item_status"], dtype=np.int64)
    item_place = np.asarray(obs["item_place"], dtype=np.int64)
    times = np.asarray(obs["item_times"], dtype=np.float64).reshape(-1, 2)
    travel = np.asarray(obs["travel_time"], dtype=np.float64)
    V, N = place.shape[0], status.shape[0]
    S = N + 1
    n_flat = legal.shape[0]
    off = ~np.eye(travel.shape[0], dtype=bool)
    unit = max(float(travel[off].mean()) if off.any() else 1.0, 1.0)

    stop_place = np.append(item_place, VENUE_PLACE)  # (S,)
    earliest = np.append(times[:, 0], clock)
    latest = np.append(times[:, 1], np.inf)
    trip = travel[place[:, None], stop_place[None, :]]  # (V, S)
    arrive = free[:, None] + trip
    start = np.maximum(arrive, earliest[None, :])
    idle = start - arrive
    slack = np.where(np.isfinite(latest)[None, :], latest[None, :] - start, _HORIZON * unit)
    home = travel[stop_place, VENUE_PLACE]  # (S,)

    drive_legal = legal[: V * S].reshape(V, S)
    item_legal = drive_legal.copy()
    item_legal[:, N] = False
    # The heuristic's key: service start, then the trip; its pick per vehicle, and each row's rank.
    key = np.where(item_legal, start + trip * 1e-3, np.inf)
    best = key.min(axis=1, keepdims=True)
    greedy = item_legal & (key <= best)
    order = np.argsort(np.argsort(key, axis=1), axis=1).astype(np.float64)
    n_item_legal = np.maximum(item_legal.sum(axis=1, keepdims=True), 1)
    rank = np.where(item_legal, order / n_item_legal, 1.0)
    # Could another (unfinished) vehicle begin this stop sooner? (its start minus ours)
    other = np.full((V, S), _HORIZON * unit)
    if V > 1:
        alive_start = np.where(finished[:, None], np.inf, start)
        for v in range(V):
            rest = np.delete(alive_start, v, axis=0).min(axis=0)
            other[v] = np.where(np.isfinite(rest), rest - start[v], _HORIZON * unit)

    F = np.zeros((n_flat, N_FEATURES), dtype=np.float32)
    d = F[: V * S].reshape(V, S, N_FEATURES)
    d[:, :N, 1] = 1.0
    d[:, N, 2] = 1.0
    d[..., 5] = np.clip(trip / unit, 0, _HORIZON) / _HORIZON
    d[..., 6] = _rel(start - clock, unit)
    d[..., 7] = _rel(idle, unit)
    d[..., 8] = _rel(slack, unit)
    d[..., 9] = (np.clip(home / unit, 0, _HORIZON) / _HORIZON)[None, :]
    d[..., 10] = greedy
    d[..., 11] = rank
    d[..., 12] = _rel(other, unit)
    waits = slice(V * S, V * S + V)
    finishes = slice(V * S + V, V * S + 2 * V)
    F[waits, 3] = 1.0
    F[finishes, 4] = 1.0
    F[finishes, 5] = np.clip(trip[:, N] / unit, 0, _HORIZON) / _HORIZON
    per_vehicle = np.stack([load / cap, (load > 0).astype(np.float64), cap / cap.max()], axis=1)
    for rows in (slice(0, V * S), waits, finishes):
        block = F[rows]
        reps = block.shape[0] // V
        block[:, 13:16] = np.repeat(per_vehicle, reps, axis=0)
    # Driving added by the stop on the way home (here -> stop -> venue instead of here -> venue),
    # whether the vehicle is already there, and how many other to-do items share the stop's
    # place (one visit serves them all: guests landing at the same airport) against free seats.
    here_home = travel[place, VENUE_PLACE]
    d[..., 18] = np.clip((trip + home[None, :] - here_home[:, None]) / unit, -_HORIZON, _HORIZON) / _HORIZON
    d[..., 19] = trip <= 0
    todo = status == 0
    same = (item_place[:, None] == item_place[None, :]) & todo[None, :]
    batch = np.append(same.sum(axis=1) - todo.astype(np.int64), 0) / max(N, 1)
    d[..., 20] = batch[None, :]
    d[..., 21] = ((cap - load) / cap.max())[:, None]
    F[:, 16] = float((status == 0).mean()) if N else 0.0
    F[:, 17] = float((status == 1).mean()) if N else 0.0
    F[:, 0] = legal
    F[~legal] = 0.0
    return F


def wedding_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The candidates: the env's legal actions (no restriction)."""
    return np.asarray(obs["action_mask"], dtype=bool)
