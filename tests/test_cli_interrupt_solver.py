"""Ctrl-C stops ``crab-gym run`` on a solver-backed env (P7: every episode ends with a CP-SAT
adaptation re-solve run by the runner): exit 130, and the episodes finished before it are
reported. CP-SAT used to catch SIGINT and swallow it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path


def test_ctrl_c_stops_a_run_on_a_solver_backed_env_and_keeps_its_episodes(tmp_path: Path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "crab_gym.cli", "run", "--env", "Realm-P7-v0", "--env-kwargs",
           '{"instance": "p7_medium_01"}', "--policy", "p7_greedy", "--episodes", "200", "--quiet", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not episodes.is_file() or not episodes.read_text().strip()):
        time.sleep(0.2)
    assert episodes.is_file(), "no episode finished within 120 s"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted after" in stderr
    report = json.loads((out / "report.json").read_text())
    assert 1 <= len(report["episodes"]) < 200
    assert all(e["error"] is None for e in report["episodes"])
    assert all(e["metrics"]["adaptation_pending"] is False for e in report["episodes"])
