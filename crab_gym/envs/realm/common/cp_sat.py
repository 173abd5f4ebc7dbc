"""CP-SAT solvers that leave Ctrl-C to the program.

CP-SAT catches SIGINT by default: it stops its search and returns as if the time had run out,
so a Ctrl-C during a reference or adaptation solve was swallowed and the run went on (and,
from a thread, the process could abort). With ``catch_sigint_signal`` off, the signal stays
Python's: the solve finishes its current search (bounded by its time limit, seconds for every
oracle here) and KeyboardInterrupt is raised as it returns, so ``crab-gym run`` stops and
reports. Running the search in a helper thread to stop it sooner was tried and rejected: a
SIGINT during a threaded solve makes OR-Tools 9.15 abort the process at exit.
Every oracle makes its solver here.
"""

from __future__ import annotations

from typing import Any

from ortools.sat.python import cp_model


def new_solver(time_limit_s: float | None = None, workers: int = 1, **parameters: Any) -> cp_model.CpSolver:
    """A CpSolver with ``max_time_in_seconds``, ``num_workers`` and any other SatParameters
    field set, and SIGINT left to Python (``catch_sigint_signal`` off)."""
    solver = cp_model.CpSolver()
    if time_limit_s is not None:
        solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    for name, value in parameters.items():
        setattr(solver.parameters, name, value)
    solver.parameters.catch_sigint_signal = False
    return solver
