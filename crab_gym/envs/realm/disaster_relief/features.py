"""What a learned P7 policy sees: one feature row per flat action of the env.

The rows follow ``DiscreteActions``' flat order: every ``send`` ``(vehicle, region,
resource)`` triple (row-major: vehicle, then region, then the 4 resources), then every
``wait`` (one per vehicle). Everything is read from the env's observation alone, so the same
code serves training, ``crab-gym run`` and any instance size; disruptions show up as
``blocked`` regions and a smaller ``stock``.

**Why these features.** The cost is first the severity-weighted need left unmet (a unit is
worth ``2 w`` on time, ``w`` late), then the minutes driven. A ``send`` carries
``min(remaining need, capacity, stock)``. The greedy heuristic (:mod:`.heuristics`) takes the
send worth most points now for the first free vehicle, shorter trips first among equals. So a send row says the load
(against the vehicle's capacity, the region's remaining need and the largest capacity),
whether it arrives by the deadline, its worth in points (relative to the best legal send now),
the trip's length and the slack to the deadline, the region's weight, how scarce the resource
is (need left everywhere against stock) and whether a faster vehicle exists for that region;
``greedy`` marks the heuristic's own send, so that the policy starts from a strong rule and
can learn where to depart from it. Global columns: the share of vehicles free now, of
regions blocked, and of need left. Times are in units of the longest one-way trip (relative
ones clipped to ``[-4, 4]`` units, scaled to [-1, 1]).
"""

from __future__ import annotations

import numpy as np

#: The columns of :func:`relief_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "is_send",
    "is_wait",
    "load_vs_capacity",
    "load_vs_remaining",
    "load_vs_largest",
    "on_time",
    "worth",
    "greedy",
    "travel",
    "deadline_slack",
    "weight",
    "scarcity",
    "fastest",
    "vehicles_free",
    "regions_blocked",
    "need_left",
)
N_FEATURES = len(FEATURE_NAMES)
N_RESOURCES = 4
_HORIZON = 4.0


def _rel(delta: np.ndarray, unit: float) -> np.ndarray:
    return np.clip(delta / unit, -_HORIZON, _HORIZON) / _HORIZON


def relief_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(n_flat, N_FEATURES)`` float32 for one observation; see the module doc."""
    legal = np.asarray(obs["action_mask"], dtype=bool)
    clock = float(np.asarray(obs["clock"]).reshape(-1)[0])
    cap = np.asarray(obs["vehicle_capacity"], dtype=np.float64)
    travel = np.asarray(obs["travel"], dtype=np.float64)  # (V, R)
    stock = np.asarray(obs["stock"], dtype=np.float64)
    need = np.asarray(obs["need"], dtype=np.float64)
    remaining = np.asarray(obs["remaining"], dtype=np.float64)  # (R, 4)
    deadline = np.asarray(obs["deadline"], dtype=np.float64)
    weight = np.asarray(obs["weight"], dtype=np.float64)
    blocked = np.asarray(obs["blocked"], dtype=np.float64)
    acting = np.asarray(obs["vehicle_acting"], dtype=np.float64)
    V, R = travel.shape
    K = N_RESOURCES
    n_flat = legal.shape[0]
    unit = max(float(travel.max(initial=0.0)), 1.0)
    big = max(float(cap.max(initial=0.0)), 1.0)

    send_legal = legal[: V * R * K].reshape(V, R, K)
    load = np.minimum(np.minimum(remaining[None, :, :], cap[:, None, None]), stock[None, None, :])
    on_time = (clock + travel <= deadline[None, :])[:, :, None]
    worth = np.where(on_time, 2.0, 1.0) * weight[None, :, None] * load
    worth_legal = np.where(send_legal, worth, -np.inf)
    top = worth_legal.max(initial=-np.inf)
    # the heuristic: most points, then the shorter trip, then the lower region index
    key = np.where(send_legal, worth - 1e-6 * travel[:, :, None] - 1e-9 * np.arange(R)[None, :, None], -np.inf)
    greedy = np.zeros_like(send_legal)
    first = np.flatnonzero(acting > 0)
    if first.size and send_legal[first[0]].any():  # the heuristic decides for the first free vehicle
        v = int(first[0])
        greedy[v].reshape(-1)[int(np.argmax(key[v]))] = True
    total_left = remaining.sum(axis=0)
    scarcity = np.clip(total_left / np.maximum(stock, 1.0), 0.0, 4.0) / 4.0
    fastest = travel <= travel.min(axis=0, keepdims=True)

    F = np.zeros((n_flat, N_FEATURES), dtype=np.float32)
    s = F[: V * R * K].reshape(V, R, K, N_FEATURES)
    s[..., 1] = 1.0
    s[..., 3] = load / np.maximum(cap, 1.0)[:, None, None]
    s[..., 4] = load / np.maximum(remaining, 1.0)[None]
    s[..., 5] = load / big
    s[..., 6] = np.broadcast_to(on_time, (V, R, K))
    s[..., 7] = worth / top if np.isfinite(top) and top > 0 else 0.0
    s[..., 8] = greedy
    s[..., 9] = (travel / unit)[:, :, None]
    s[..., 10] = _rel(deadline[None, :] - clock - travel, unit)[:, :, None]
    s[..., 11] = (weight / 4.0)[None, :, None]
    s[..., 12] = scarcity[None, None, :]
    s[..., 13] = fastest[:, :, None]
    F[V * R * K:, 2] = 1.0
    F[V * R * K:, 8] = not greedy.any()
    F[:, 14] = float(acting.mean()) if V else 0.0
    F[:, 15] = float(blocked.mean()) if R else 0.0
    F[:, 16] = float(remaining.sum() / max(need.sum(), 1.0))
    F[:, 0] = legal
    F[~legal] = 0.0
    return F


def relief_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The candidates: the env's legal actions (no restriction)."""
    return np.asarray(obs["action_mask"], dtype=bool)
