"""Independent checks used by the P11 tests (written apart from the env's own code)."""

from __future__ import annotations

import gymnasium as gym

ENV_ID = "Realm-P11-v0"


def ensure_registered() -> None:
    import crab_gym  # noqa: F401  (registers the suite's ids when the lead has added P11)

    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="crab_gym.envs.realm.jobshop.env:JobShopEnv")


def semi_active_makespan(durations, machines, sequence) -> tuple[int, dict]:
    """Start every operation as early as its job and machine predecessors allow, given
    machine orders; return (makespan, {(job, op): start}). Raises on a deadlock."""
    n, m_ops = len(durations), len(durations[0])
    n_machines = len(sequence)
    # the k-th occurrence of job j on machine mc is job j's k-th operation on mc
    ops_on = {}
    for j in range(n):
        for k in range(m_ops):
            ops_on.setdefault((j, machines[j][k]), []).append(k)
    order = []
    for mc in range(n_machines):
        seen = {}
        row = []
        for j in sequence[mc]:
            c = seen.get(j, 0)
            seen[j] = c + 1
            row.append((j, ops_on[(j, mc)][c]))
        order.append(row)
    start = {}
    pos = [0] * n_machines
    nxt = [0] * n
    job_end = [0] * n
    mach_end = [0] * n_machines
    placed = 0
    total = n * m_ops
    while placed < total:
        moved = False
        for mc in range(n_machines):
            while pos[mc] < len(order[mc]):
                j, k = order[mc][pos[mc]]
                if nxt[j] != k:
                    break
                t = max(job_end[j], mach_end[mc])
                start[(j, k)] = t
                job_end[j] = mach_end[mc] = t + durations[j][k]
                nxt[j] += 1
                pos[mc] += 1
                placed += 1
                moved = True
        if not moved:
            raise AssertionError("deadlocked plan")
    return max(job_end), start


def check_feasible(durations, machines, starts: dict) -> None:
    """Assert job order and machine exclusivity of explicit start times."""
    n, m_ops = len(durations), len(durations[0])
    per_machine = {}
    for j in range(n):
        for k in range(m_ops):
            s = starts[(j, k)]
            assert s >= 0
            if k:
                assert starts[(j, k - 1)] + durations[j][k - 1] <= s, (j, k)
            per_machine.setdefault(machines[j][k], []).append((s, s + durations[j][k], j))
    for ivs in per_machine.values():
        ivs.sort()
        for a, b in zip(ivs, ivs[1:]):
            assert a[1] <= b[0], (a, b)
