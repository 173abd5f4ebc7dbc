"""What a learned P6/P9 policy sees: one feature row per flat action of the env.

The rows follow ``DiscreteActions``' flat order: every ``send_car`` ``(car, member)`` pair
(car-major), every ``start_task`` ``(task, cook)`` pair (task-major), then ``wait``. Everything
is read from the env's observation alone (P9's ``member_delay`` is already inside
``member_landing``, the landing as known now), so the same code serves training,
``crab-gym run`` and any instance size.

**Why these features.** The afternoon's cost is when dinner is ready: the critical path of the
cooking, and the travellers who must be home before they can cook. The greedy heuristic
(:mod:`.heuristics`) fetches the earliest-landing traveller first and starts the task with the
longest remaining chain by the least versatile idle cook. So a ``send_car`` row says when the
traveller lands relative to now, whether it is the earliest unfetched landing, and whether
the car waits at the airport or when it is free; a ``start_task`` row says the task's duration,
its chain (duration plus the longest chain of successors), whether that chain is the longest
among the tasks that can start now, how many tasks the cook could do (versatility), the oven,
its successors, and the slack to the deadline; the ``wait`` row says how soon the next event
comes. ``greedy`` marks the heuristic's own send / start (its send preferring a car idle at
the airport; ``eager_send`` a send rule that also joins trips it delays), so that the policy starts from a
strong rule and can learn where to depart from it. Global columns: kitchen places free, the
share of tasks left and of travellers not yet fetched. Times are in units of the instance's
critical path (relative ones clipped to ``[-4, 4]`` units, scaled to [-1, 1]).
"""

from __future__ import annotations

import numpy as np

#: The columns of :func:`thanksgiving_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "legal",
    "is_send",
    "is_start",
    "is_wait",
    "landing_delay",
    "earliest_landing",
    "car_at_airport",
    "car_free_delay",
    "duration",
    "chain",
    "longest_chain",
    "cook_versatility",
    "oven",
    "successors",
    "deadline_slack",
    "greedy",
    "next_event",
    "kitchen_free",
    "tasks_left",
    "travellers_left",
    "car_busy",
    "join_delay",
    "eager_send",
)
N_FEATURES = len(FEATURE_NAMES)
_HORIZON = 4.0


def _rel(delta: np.ndarray, unit: float) -> np.ndarray:
    return np.clip(delta / unit, -_HORIZON, _HORIZON) / _HORIZON


def chain_lengths(duration: np.ndarray, precedence: np.ndarray) -> np.ndarray:
    """Each task's duration plus its longest chain of successors (``precedence[a, b]``: b after a)."""
    chain = duration.astype(np.float64).copy()
    succ = precedence.astype(bool)
    for _ in range(duration.shape[0]):
        nxt = duration + np.where(succ, chain[None, :], 0.0).max(axis=1, initial=0.0)
        if np.array_equal(nxt, chain):
            break
        chain = nxt
    return chain


def thanksgiving_features(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``(n_flat, N_FEATURES)`` float32 for one observation; see the module doc."""
    legal = np.asarray(obs["action_mask"], dtype=bool)
    clock = float(np.asarray(obs["clock"]).reshape(-1)[0])
    deadline = float(np.asarray(obs["deadline"]).reshape(-1)[0])
    duration = np.asarray(obs["task_duration"], dtype=np.float64)
    oven = np.asarray(obs["task_oven"], dtype=np.float64)
    status = np.asarray(obs["task_status"], dtype=np.int64)
    prec = np.asarray(obs["precedence"], dtype=bool)
    skills = np.asarray(obs["skills"], dtype=bool)  # (M, N)
    landing = np.asarray(obs["member_landing"], dtype=np.float64)
    home_at = np.asarray(obs["member_home_at"], dtype=np.float64)
    member_busy = np.asarray(obs["member_busy_until"], dtype=np.float64)
    task_end = np.asarray(obs["task_end"], dtype=np.float64)
    car_free = np.asarray(obs["car_free_at"], dtype=np.float64)
    at_airport = np.asarray(obs["car_at_airport"], dtype=np.float64)
    kitchen = float(np.asarray(obs["kitchen_free"]).reshape(-1)[0])
    C, M, N = car_free.shape[0], landing.shape[0], duration.shape[0]
    n_flat = legal.shape[0]

    chain = chain_lengths(duration, prec)
    unit = max(float(chain.max(initial=0.0)), 1.0)
    send_legal = legal[: C * M].reshape(C, M)
    start_legal = legal[C * M: C * M + N * M].reshape(N, M)
    traveller = landing >= 0
    unfetched = traveller & (home_at < 0)

    F = np.zeros((n_flat, N_FEATURES), dtype=np.float32)
    g_send = _send_rows(F[: C * M].reshape(C, M, N_FEATURES), send_legal, landing, home_at, traveller, car_free,
                        at_airport, clock, unit)

    t = F[C * M: C * M + N * M].reshape(N, M, N_FEATURES)
    t[..., 2] = 1.0
    t[..., 8] = (duration / unit)[:, None]
    t[..., 9] = (chain / unit)[:, None]
    startable = start_legal.any(axis=1)
    top = np.where(startable, chain, -np.inf).max(initial=-np.inf)
    longest = startable & (chain >= top)
    t[..., 10] = longest[:, None]
    versatility = skills.sum(axis=1) / max(N, 1)
    t[..., 11] = versatility[None, :]
    t[..., 12] = oven[:, None]
    left = status < 2
    t[..., 13] = ((prec & left[None, :]).sum(axis=1) / max(N, 1))[:, None]
    t[..., 14] = _rel(deadline - clock - chain, unit)[:, None]
    g_start = np.zeros((N, M), dtype=bool)
    if not g_send.any() and longest.any():
        task = int(np.flatnonzero(longest)[0])
        cooks = np.flatnonzero(start_legal[task])
        g_start[task, cooks[np.argmin(versatility[cooks])]] = True
    t[..., 15] = g_start

    w = C * M + N * M
    F[w:, 3] = 1.0
    events = np.concatenate([task_end[task_end > clock], car_free[car_free > clock], member_busy[member_busy > clock],
                             landing[unfetched & (landing > clock)]])
    F[w:, 16] = _rel(events.min() - clock, unit) if events.size else 1.0
    F[w:, 15] = not (g_send.any() or g_start.any())

    F[:, 17] = min(kitchen, 4.0) / 4.0
    F[:, 18] = float(left.mean()) if N else 0.0
    F[:, 19] = float(unfetched.sum() / max(traveller.sum(), 1))
    F[:, 0] = legal
    F[~legal] = 0.0
    return F


def thanksgiving_mask(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The candidates: the env's legal actions (no restriction)."""
    return np.asarray(obs["action_mask"], dtype=bool)


def _send_rows(s: np.ndarray, send_legal: np.ndarray, landing: np.ndarray, home_at: np.ndarray,
               traveller: np.ndarray, car_free: np.ndarray, at_airport: np.ndarray, clock: float,
               unit: float) -> np.ndarray:
    """Fill the (car, traveller) send rows ``s`` in place; returns the heuristic's send (a bool (C, M))."""
    C, M = send_legal.shape
    s[..., 1] = 1.0
    s[..., 4] = _rel(landing - clock, unit)[None, :]
    cand = send_legal.any(axis=0)
    first = np.where(cand, landing, np.inf)
    earliest = cand & (landing <= first.min(initial=np.inf))
    s[..., 5] = earliest[None, :]
    s[..., 6] = at_airport[:, None]
    s[..., 7] = _rel(np.maximum(car_free - clock, 0.0), unit)[:, None]
    # The heuristic's send: the earliest-landing traveller that a car can take without delaying
    # a trip (one heading to the airport that leaves after the landing), else with an idle car;
    # travellers no car can take so are passed over. Unlike the heuristic (the first idle car in
    # id order), a car idle at the airport is preferred: it fetches without driving there. A trip leaves the airport
    # ``travel`` minutes before the car is home; ``travel`` is read off the members already
    # assigned (home minus landing is at least the drive, equal for the trip's last lander).
    assigned = traveller & (home_at >= 0)
    drive = float((home_at - landing)[assigned].min()) if assigned.any() else np.inf
    busy = car_free > clock
    join_delay = np.where(busy[:, None], landing[None, :] + drive - car_free[:, None], 0.0)  # (C, M)
    s[..., 20] = busy[:, None]
    s[..., 21] = _rel(np.where(np.isfinite(join_delay), join_delay, 0.0), unit)
    g_send = np.zeros((C, M), dtype=bool)
    for m in np.flatnonzero(cand)[np.argsort(landing[cand], kind="stable")]:
        cars = send_legal[:, m]
        join = cars & ((at_airport > 0) | (busy & (join_delay[:, m] <= 0)))
        idle = cars & ~busy & (at_airport <= 0)
        pick = np.flatnonzero(join if join.any() else idle)
        if pick.size:
            g_send[int(pick[0]), m] = True
            break
    s[..., 15] = g_send
    # A more eager send rule: the earliest landing now, by a car at the airport if one is legal,
    # else by the first legal car, even when that delays a trip (it beats the heuristic on P6's
    # test split when followed blindly, loses on P9's; the policy weighs the two).
    eager = np.zeros((C, M), dtype=bool)
    if earliest.any():
        m = int(np.flatnonzero(earliest)[0])
        cars = np.flatnonzero(send_legal[:, m])
        airport = [c for c in cars if at_airport[c] > 0]
        eager[(airport or list(cars))[0], m] = True
    s[..., 22] = eager

    return g_send
