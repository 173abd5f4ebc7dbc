"""What a learned planner sees of a P10 state: one feature row per ``order``, ``produce`` and
``next_day``.

Reads only the env's observation (day, budget and demand left, stock, arrivals to come,
suppliers' and facilities' capacity left today, prices, lead times, shortages, breakdowns, the
mask), so the same code serves ``gym.make`` and a trained model playing through ``crab-gym
run``. The bill of materials, the due day and the penalties are not in the observation; the
features do without them.

**Rows.** The flat actions of ``DiscreteActions`` are ``order`` row-major over ``(component,
supplier, level)``, then ``produce`` over ``(facility, level)``, then ``next_day``; levels are
the quantities ``1, 5, 10, 50, 100, 500`` (:data:`LEVELS`).

**Candidates** (:func:`supply_mask`): the legal rows, with each facility's ``produce`` narrowed
to its largest legal level: a stage run is only ever limited by what it may make today, and
making less today only delays GPUs (the greedy rule runs every stage at its largest level).

**Features** (``FEATURE_NAMES``; quantities in units of the GPUs still due, money in units of
the budget left, days in units of the horizon): legality; order, produce or next-day; the
level (log scale) and the quantity over the demand left; whether it is the largest legal level
of its (component, supplier) or facility; for an order: the unit price over the component's
cheapest price, the order's cost over the budget left, the lead time and the arrival day's
distance to the last day, the component's stock and arrivals to come over the demand left
(and over the best-covered component's), the supplier's units left today, a shortage; for a
run: its facility, its input in stock (components: the least stocked one), its capacity left
today, a breakdown; and for every row the day, the share of the horizon left and the GPUs
still due over the GPUs due at all (due + packaged).
"""

from __future__ import annotations

import numpy as np

#: The order and production quantities (the env's ``LEVELS``; repeated here: a family's
#: features may not import its env's heavy module, and the test checks they agree).
LEVELS: tuple[int, ...] = (1, 5, 10, 50, 100, 500)

#: The columns of :func:`supply_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "is_order",
    "is_produce",
    "is_next_day",
    "level",
    "quantity_over_demand",
    "largest_legal_level",
    "price_over_cheapest",
    "cost_over_budget",
    "lead_time",
    "arrival_to_end",
    "component_cover",
    "cover_over_best",
    "supplier_left",
    "shortage",
    "assembly",
    "testing",
    "packaging",
    "input_stock",
    "facility_left",
    "breakdown",
    "day",
    "days_left",
    "demand_left_share",
)
N_FEATURES = len(FEATURE_NAMES)


def _layout(obs: dict[str, np.ndarray]) -> tuple[int, int, int]:
    """(components, suppliers, days)."""
    S, C = np.asarray(obs["price"]).shape
    T = np.asarray(obs["arrivals"]).shape[1]
    return C, S, T


def supply_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(C * S * 6 + 3 * 6 + 1, N_FEATURES)`` float32 rows in flat-action order."""
    C, S, T = _layout(obs)
    L = len(LEVELS)
    legal = np.asarray(obs["action_mask"], dtype=bool)
    day = float(np.asarray(obs["day"]).reshape(-1)[0])
    budget = max(1.0, float(np.asarray(obs["budget_left"]).reshape(-1)[0]))
    demand = float(np.asarray(obs["demand_left"]).reshape(-1)[0])
    stage = np.asarray(obs["stage_stock"], dtype=np.float64)
    on_hand = np.asarray(obs["on_hand"], dtype=np.float64)
    arrivals = np.asarray(obs["arrivals"], dtype=np.float64)
    supplier_left = np.asarray(obs["supplier_left"], dtype=np.float64)
    facility_left = np.asarray(obs["facility_left"], dtype=np.float64)
    price = np.asarray(obs["price"], dtype=np.float64)
    lead = np.asarray(obs["lead_time"], dtype=np.float64)
    shortage = np.asarray(obs["shortage"], dtype=np.float64)
    breakdown = np.asarray(obs["breakdown"], dtype=np.float64)
    unit = max(1.0, demand)
    levels = np.asarray(LEVELS, dtype=np.float64)
    last = max(1.0, T - 1.0)
    n_order, n_produce = C * S * L, 3 * L

    rows = np.zeros((n_order + n_produce + 1, N_FEATURES), dtype=np.float32)
    rows[:, 0] = legal
    rows[:, 21] = day / last
    rows[:, 22] = (last - day) / last
    rows[:, 23] = demand / max(1.0, demand + stage[2])

    o = np.zeros((C, S, L, N_FEATURES), dtype=np.float32)
    olegal = legal[:n_order].reshape(C, S, L)
    o[..., 1] = 1.0
    o[..., 4] = (np.log10(levels) / np.log10(levels[-1]))[None, None, :]
    o[..., 5] = np.clip(levels / unit, 0, 4)[None, None, :] / 4
    top = np.where(olegal, levels[None, None, :], 0).max(axis=2, keepdims=True)
    o[..., 6] = olegal & (levels[None, None, :] == top)
    cheapest = np.maximum(price.min(axis=0), 1e-9)  # (C,)
    o[..., 7] = np.clip(price.T / cheapest[:, None], 0, 4)[:, :, None] / 4
    o[..., 8] = np.clip(price.T[:, :, None] * levels[None, None, :] / budget, 0, 2) / 2
    o[..., 9] = (np.clip(lead, 0, last) / last)[None, :, None]
    o[..., 10] = (np.clip(last - day - lead, -last, last) / last)[None, :, None]
    future = arrivals[:, int(min(max(day, 0), T - 1)):].sum(axis=1) if T else np.zeros(C)
    cover = (on_hand + future) / unit  # (C,)
    o[..., 11] = (np.clip(cover, 0, 4) / 4)[:, None, None]
    best = max(float(cover.max()), 1e-9)
    o[..., 12] = (cover / best)[:, None, None] if cover.max() > 0 else 0.0
    o[..., 13] = (np.clip(supplier_left.T / unit, 0, 4) / 4)[:, :, None]
    o[..., 14] = shortage.T[:, :, None]
    rows[:n_order, 1:21] = o.reshape(n_order, N_FEATURES)[:, 1:21]

    p = np.zeros((3, L, N_FEATURES), dtype=np.float32)
    plegal = legal[n_order:n_order + n_produce].reshape(3, L)
    p[..., 2] = 1.0
    p[..., 4] = (np.log10(levels) / np.log10(levels[-1]))[None, :]
    p[..., 5] = np.clip(levels / unit, 0, 4)[None, :] / 4
    top = np.where(plegal, levels[None, :], 0).max(axis=1, keepdims=True)
    p[..., 6] = plegal & (levels[None, :] == top)
    for k in range(3):
        p[k, :, 15 + k] = 1.0
    inputs = np.array([on_hand.min() if C else 0.0, stage[0], stage[1]])
    p[..., 18] = (np.clip(inputs / unit, 0, 4) / 4)[:, None]
    p[..., 19] = (np.clip(facility_left / unit, 0, 4) / 4)[:, None]
    p[..., 20] = breakdown[:, None]
    rows[n_order:n_order + n_produce, 1:21] = p.reshape(n_produce, N_FEATURES)[:, 1:21]
    rows[-1, 3] = 1.0
    return rows


def supply_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The legal rows, each facility's ``produce`` only at its largest legal level."""
    C, S, _ = _layout(obs)
    L = len(LEVELS)
    mask = np.asarray(obs["action_mask"], dtype=bool).copy()
    n_order = C * S * L
    runs = mask[n_order:n_order + 3 * L].reshape(3, L)
    keep = np.zeros_like(runs)
    for k in range(3):
        hits = np.flatnonzero(runs[k])
        if hits.size:
            keep[k, hits[-1]] = True
    mask[n_order:n_order + 3 * L] = keep.reshape(-1)
    return mask
