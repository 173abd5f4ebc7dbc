"""A Ctrl-C during a CP-SAT solve reaches the program: KeyboardInterrupt once the solve's
time limit is spent, never swallowed (CP-SAT's default catches SIGINT and returns as if the
time had run out, and the run went on)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

from crab_gym.envs.realm.common.cp_sat import new_solver

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading
    from crab_gym.envs.realm.jobshop.library import load_jssp_instance
    from crab_gym.envs.realm.jobshop.oracle import solve_jssp
    inst = load_jssp_instance("ta41")  # 30 x 20: no proof within the limit
    print("solving", flush=True)
    try:
        result = solve_jssp(inst, time_limit=4.0, num_workers=1, cache=False)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    print("finished", result.status, flush=True)
    """
)


def test_new_solver_leaves_sigint_to_python():
    solver = new_solver(2.5, 3, random_seed=7)
    assert solver.parameters.catch_sigint_signal is False
    assert (solver.parameters.max_time_in_seconds, solver.parameters.num_workers) == (2.5, 3)
    assert solver.parameters.random_seed == 7


def test_ctrl_c_during_an_oracle_solve_stops_the_program():
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "solving"
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert out.strip() == "interrupted" and proc.returncode == 130
    assert time.monotonic() - start < 30
