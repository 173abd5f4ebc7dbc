"""What a learned dispatcher sees of a P2 state: one feature row per ``assign(group, guide)``.

Reads only the env's observation (group sizes, arrivals, preferred starts, the guides and starts
given so far, the guides' windows, caps and loads, the tour duration, the mask), so the same
code serves ``gym.make`` and a trained model playing through ``crab-gym run``.

**Rows.** The flat actions of ``DiscreteActions`` are ``assign`` row-major over ``(group,
guide)``: row ``g * K + k`` assigns group ``g`` to guide ``k``. The policy may pick any legal row
(:func:`assign_mask` is the legal mask).

**Features** (``FEATURE_NAMES``; minutes in units of the tour duration ``D``): legality; the
start the env would give (the guide's earliest free slot from the group's arrival, the rule of
``Schedule.earliest``, recomputed from the observation) as waiting beyond the preferred start,
and relative to the earliest start any legal guide offers that group; the group's preferred
start relative to the earliest preferred start of the groups still open, and its rank among
them; how many guides could take the group and how many groups the guide could take (shares);
the guide's load relative to the fair share and to the least loaded guide; the guide's time left
after the tour; the group's size over the guide's cap; and the share of groups still open.
These are what the objective (waiting beyond the preferred start + 30 x load imbalance) and the
greedy rule (earliest preferred group to the guide who starts it soonest) read.
"""

from __future__ import annotations

import numpy as np

#: The columns of :func:`assign_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "wait",
    "start_over_best_guide",
    "preferred_from_first",
    "preferred_rank",
    "guides_for_group",
    "groups_for_guide",
    "load_over_fair",
    "load_over_least",
    "guide_time_left",
    "size_over_cap",
    "open_share",
)
N_FEATURES = len(FEATURE_NAMES)

#: Relative times are clipped to this many tour durations (then divided by it).
_HORIZON = 8.0


def _rel(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -_HORIZON, _HORIZON) / _HORIZON


def earliest_starts(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(G, K)`` the first minute >= arrival and >= the guide's start where a whole tour fits
    between the guide's tours so far (NaN: none before the guide's end)."""
    arrival = np.asarray(obs["group_arrival"], dtype=np.float64)
    guide = np.asarray(obs["group_guide"]).astype(np.int64)
    start = np.asarray(obs["group_start"], dtype=np.float64)
    window = np.asarray(obs["guide_window"], dtype=np.float64)
    D = float(np.asarray(obs["tour_duration"]).reshape(-1)[0])
    G, K = arrival.shape[0], window.shape[0]
    out = np.full((G, K), np.nan)
    for k in range(K):
        tours = np.sort(start[guide == k])
        s = np.maximum(arrival, window[k, 0])
        for a in tours:  # the same sweep as Schedule.earliest, for all groups at once
            clash = (s + D > a) & (s < a + D)
            s = np.where(clash, a + D, s)
        out[:, k] = np.where(s + D <= window[k, 1], s, np.nan)
    return out


def assign_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(G * K, N_FEATURES)`` float32 rows, row ``g * K + k`` = ``assign(g, k)``."""
    preferred = np.asarray(obs["group_preferred"], dtype=np.float64)
    size = np.asarray(obs["group_size"], dtype=np.float64)
    guide = np.asarray(obs["group_guide"]).astype(np.int64)
    window = np.asarray(obs["guide_window"], dtype=np.float64)
    cap = np.asarray(obs["guide_cap"], dtype=np.float64)
    load = np.asarray(obs["guide_load"], dtype=np.float64)
    D = max(1.0, float(np.asarray(obs["tour_duration"]).reshape(-1)[0]))
    G, K = preferred.shape[0], cap.shape[0]
    legal = np.asarray(obs["action_mask"], dtype=bool).reshape(G, K)
    s = earliest_starts(obs)
    s_legal = np.where(legal, s, np.inf)
    s_fill = np.where(np.isnan(s), window[None, :, 1], s)

    f = np.zeros((G, K, N_FEATURES), dtype=np.float32)
    f[..., 0] = legal
    f[..., 1] = _rel(np.maximum(0.0, s_fill - preferred[:, None]) / D)
    best = s_legal.min(axis=1, keepdims=True)
    best = np.where(np.isfinite(best), best, s_fill.min(axis=1, keepdims=True))
    f[..., 2] = _rel((s_fill - best) / D)
    open_groups = guide < 0
    if open_groups.any():
        first = preferred[open_groups].min()
        f[..., 3] = _rel((preferred - first) / D)[:, None]
        order = np.argsort(np.argsort(np.where(open_groups, preferred, np.inf), kind="stable"), kind="stable")
        f[..., 4] = (np.minimum(order, open_groups.sum()) / max(1, open_groups.sum()))[:, None]
    f[..., 5] = (legal.sum(axis=1) / K)[:, None]
    f[..., 6] = (legal.sum(axis=0) / G)[None, :]
    fair = G / K
    f[..., 7] = np.clip(load / fair, 0, 4)[None, :] / 4
    f[..., 8] = np.clip(load - load.min(), 0, 8)[None, :] / 8
    f[..., 9] = _rel((window[None, :, 1] - s_fill - D) / D)
    f[..., 10] = np.clip(size[:, None] / np.maximum(cap[None, :], 1.0), 0, 2) / 2
    f[..., 11] = open_groups.sum() / G
    return f.reshape(G * K, N_FEATURES)


def assign_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """Every legal ``assign`` (no restriction)."""
    return np.asarray(obs["action_mask"], dtype=bool)
