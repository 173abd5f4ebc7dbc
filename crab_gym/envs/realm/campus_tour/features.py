"""What a learned walker sees of a P1 state: one feature row per ``visit``, and which to offer.

Reads only the env's observation (``location``, ``clock``, ``travel_left``, ``visited``,
``windows``, ``travel``, ``action_mask``), so the same code serves ``gym.make`` and a trained
model playing through ``crab-gym run``.

**Rows.** The flat actions of ``DiscreteActions`` are ``visit`` over the targets in location
order, then ``end``. The observation does not name ``start`` and ``end``; with ``n`` locations
and ``n_flat = n_targets + 1`` actions, the tour is a round trip (``start == end``) when
``n == n_flat`` and goes from ``start`` to a separate ``end`` when ``n == n_flat + 1``. Every
generated and shipped campus has ``start`` (the entrance) at location 0 and, when separate,
``end`` last; :func:`stop_locations` assumes this layout.

**Candidates** (:func:`visit_mask`): the legal visits, without ``end`` while some target is
still legal: walking to ``end`` finishes the tour, and leaving a reachable target out makes it
infeasible (optimality 0), so only a policy that cannot reach any target more goes back.

**Features** (``FEATURE_NAMES``; minutes in units of the campus's mean leg, so campuses of any
size look alike): legality; whether the row is ``end``; the leg from here; the wait on arrival;
the slack before the target closes; its closing time and its opening time relative to the
clock; the leg from it to ``end``; the budget left after going there and back; how much longer
the leg is than the shortest legal one, and how much later its closing is than the earliest
legal one; the share of the other unvisited targets that going there first would make late
(a one-step look-ahead on the windows); and the share of targets still unvisited; the rank of its leg among the legal targets'; and
its distance to the nearest other unvisited target (isolation).
"""

from __future__ import annotations

import numpy as np

#: The columns of :func:`visit_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "is_end",
    "leg",
    "wait",
    "close_slack",
    "close_from_now",
    "open_from_now",
    "leg_to_end",
    "budget_after",
    "leg_over_nearest",
    "close_over_earliest",
    "others_made_late",
    "unvisited_share",
    "leg_rank",
    "isolation",
)
N_FEATURES = len(FEATURE_NAMES)

#: Relative times are clipped to this many mean legs (then divided by it).
_HORIZON = 8.0


def stop_locations(n_locations: int, n_flat: int) -> tuple[np.ndarray, int, int]:
    """The location of each flat ``visit`` (targets, then end), the start and the end index."""
    if n_locations == n_flat:  # a round trip: start == end == 0
        start = end = 0
    elif n_locations == n_flat + 1:  # start 0, end last
        start, end = 0, n_locations - 1
    else:
        raise ValueError(f"{n_locations} locations do not fit {n_flat} visit actions")
    targets = [i for i in range(n_locations) if i not in (start, end)]
    return np.asarray(targets + [end], dtype=np.int64), start, end


def _rel(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -_HORIZON, _HORIZON) / _HORIZON


def visit_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(n_flat, N_FEATURES)`` float32 rows, row ``k`` = flat action ``k`` (see the module doc)."""
    legal = np.asarray(obs["action_mask"], dtype=bool)
    travel = np.asarray(obs["travel"], dtype=np.float64)
    windows = np.asarray(obs["windows"], dtype=np.float64)
    visited = np.asarray(obs["visited"], dtype=bool)
    here = int(np.asarray(obs["location"]).reshape(-1)[0])
    clock = float(np.asarray(obs["clock"]).reshape(-1)[0])
    left = float(np.asarray(obs["travel_left"]).reshape(-1)[0])
    n_flat = legal.shape[0]
    stops, _, end = stop_locations(travel.shape[0], n_flat)
    positive = travel[travel > 0]
    scale = float(positive.mean()) if positive.size else 1.0

    leg = travel[here, stops]
    arrive = clock + leg
    begin = np.maximum(arrive, windows[stops, 0])
    back = travel[stops, end]
    rows = np.zeros((n_flat, N_FEATURES), dtype=np.float32)
    rows[:, 0] = legal
    rows[-1, 1] = 1.0
    rows[:, 2] = _rel(leg / scale)
    rows[:, 3] = _rel((begin - arrive) / scale)
    rows[:, 4] = _rel((windows[stops, 1] - arrive) / scale)
    rows[:, 5] = _rel((windows[stops, 1] - clock) / scale)
    rows[:, 6] = _rel((windows[stops, 0] - clock) / scale)
    rows[:, 7] = _rel(back / scale)
    rows[:, 8] = _rel((left - leg - back) / scale)
    targets = legal.copy()
    targets[-1] = False
    if targets.any():
        rows[:, 9] = _rel((leg - leg[targets].min()) / scale)
        rows[:, 10] = _rel((windows[stops, 1] - windows[stops[targets], 1].min()) / scale)
    open_targets = ~visited[stops[:-1]]
    others = stops[:-1][open_targets]
    if others.size:
        # begin at the row's stop, then walk to each other unvisited target: late there?
        reach = begin[:, None] + travel[np.ix_(stops, others)]
        late = reach > windows[others, 1][None, :]
        late &= stops[:, None] != others[None, :]
        rows[:, 11] = late.sum(axis=1) / others.size
    rows[:, 12] = open_targets.sum() / max(1, n_flat - 1)
    if targets.any():  # the leg's rank among the legal targets' legs (0: the nearest)
        legal_legs = np.sort(leg[targets])
        rows[:, 13] = np.searchsorted(legal_legs, leg, side="left") / max(1, targets.sum())
    if others.size > 1:
        # how far the row's stop lies from the nearest other unvisited target (an outlier is
        # best visited while passing by; a stop in a cluster is cheap to reach later)
        near = travel[np.ix_(stops, others)].astype(np.float64)
        near[stops[:, None] == others[None, :]] = np.inf
        rows[:, 14] = _rel(np.min(near, axis=1) / scale)
    return rows


def visit_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The legal visits, ``end`` only when no target is legal (see the module doc)."""
    legal = np.asarray(obs["action_mask"], dtype=bool).copy()
    if legal[:-1].any():
        legal[-1] = False
    return legal
