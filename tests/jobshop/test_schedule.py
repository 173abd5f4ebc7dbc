"""The schedule engine: earliest-start dispatch with left-shift insertion, whole plans."""

import pytest

from crab_gym.datasets.jssp import JSSPInstance, load_jssp_instance, solve_jssp
from crab_gym.envs.realm.jobshop.sim import JobShopSchedule, replay_order


def test_dispatch_fills_an_idle_gap():
    # job 0: m0(2) then m1(5); job 1: m1(1). Job 0's m1 op starts at 2, leaving [0, 2) idle
    # on m1: job 1's op (1 unit) must be inserted at 0 rather than appended at 7.
    inst = JSSPInstance(durations=[[2, 5], [1, 1]], machines=[[0, 1], [1, 0]])
    s = JobShopSchedule(inst)
    s.dispatch(0)
    s.dispatch(0)
    assert s.dispatch(1) == (0, 0, 1)
    assert s.sequences()[1] == [1, 0]
    assert s.machine_available.tolist() == [2.0, 7.0]
    assert s.dispatch(1) == (1, 2, 3)  # after its own op, and after job 0's [0, 2) on m0
    assert s.makespan == 7 and s.complete


def test_gap_too_short_is_skipped():
    inst = JSSPInstance(durations=[[2, 5], [3, 1]], machines=[[0, 1], [1, 0]])
    s = JobShopSchedule(inst)
    s.dispatch(0)
    s.dispatch(0)
    assert s.dispatch(1) == (0, 7, 10)  # 3 units do not fit in [0, 2)


def test_lower_bounds_follow_the_job_chain():
    inst = load_jssp_instance("ft06")
    s = JobShopSchedule(inst)
    assert s.lower_bound[0].tolist() == [1, 4, 10, 17, 20, 26]
    assert s.lb_makespan == max(sum(r) for r in inst.durations)
    s.dispatch(1)  # job 1 op 0: m1 for 8
    s.dispatch(3)  # job 3 op 0: m1 for 5 -> starts at 8
    assert s.lower_bound[3].tolist() == [13, 18, 23, 26, 34, 43]
    assert s.done[3].tolist() == [1, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("name, optimum", [("ft06", 55), ("la01", 666)])
def test_replaying_an_optimal_schedule_reaches_the_optimum(name, optimum):
    inst = load_jssp_instance(name)
    result = solve_jssp(inst, time_limit=20.0, num_workers=2)
    s = JobShopSchedule(inst)
    for job in replay_order(result.detail["starts"]):
        s.dispatch(job)
    assert s.complete and s.makespan == optimum


def test_plan_checks_keep_the_state():
    inst = load_jssp_instance("ft06")
    s = JobShopSchedule(inst)
    s.dispatch(2)
    before = s.snapshot()
    reason, _ = s.check_plan([[0, 1, 2, 3, 4, 5]] * 5)
    assert "6 lists" in reason
    reason, _ = s.check_plan([[0, 1, 2, 3, 4]] + [[0, 1, 2, 3, 4, 5]] * 5)
    assert "machine 0" in reason and "missing job(s) [5]" in reason
    reason, _ = s.check_plan([[0, 1, 2, 3, 4, 5]] * 6)
    assert "machine 2" in reason and "must start with [2]" in reason
    assert s.snapshot() == before
