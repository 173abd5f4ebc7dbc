"""Every report carries its run's card (split, instances, seeds, budgets, tracks, versions, the
command), and ``crab-gym run --rerun report.json`` runs that command again to the same numbers."""

from __future__ import annotations

import json

import pytest

from crab_gym.cli import main
from crab_gym.evaluation.report import strip_wall_clock


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_card_says_what_ran_and_a_rerun_gives_the_same_report(capsys, tmp_path):
    first, again = tmp_path / "first", tmp_path / "again"
    code, out, err = run(capsys, "run", "--env", "Realm-P3-v0", "--split", "test", "--sizes", "small",
                         "--policy", "random", "oracle", "--episodes", "2", "--quiet", "--out", str(first))
    assert code == 0, err
    report = json.loads((first / "report.json").read_text())
    card = report["card"]
    assert card["selection"] == {"Realm-P3-v0": {"split": "test[small]", "instances": [
        "p3_small_02", "p3_small_03", "p3_small_05", "p3_small_06", "p3_small_08"]}}
    assert card["seeds"] == {"random": [0, 1], "oracle": [0, 1]} and card["max_steps"] == 10_000
    assert card["tracks"] == {"random": "solver-free", "oracle": "solver-allowed"}
    assert {"python", "crab_gym", "gymnasium", "ortools"} <= set(card["versions"])
    assert card["argv"][:3] == ["run", "--env", "Realm-P3-v0"] and card["spent"]["episodes"] == 20
    assert "**Run card**" in out and "split `test[small]`" in (first / "report.md").read_text()

    code, _, err = run(capsys, "run", "--rerun", str(first / "report.json"), "--out", str(again))
    assert code == 0 and "rerunning `crab-gym run --env Realm-P3-v0" in err, err
    rerun = json.loads((again / "report.json").read_text())
    assert strip_wall_clock(rerun) == strip_wall_clock(report)
    assert rerun["card"]["argv"][-2:] == ["--out", str(again)]
    # `crab-gym report DIR` rebuilds the report with its card (kept beside the episodes)
    assert run(capsys, "report", str(again))[0] == 0
    assert json.loads((again / "report.json").read_text())["card"]["selection"] == card["selection"]


@pytest.mark.parametrize("argv, fragment", [
    (["--env", "Realm-P1-v0"], "beside it give only --out, --workers, --quiet, --backend, --address, --retry-errors (not --env)"),
    ([], "has no 'card'"),
])
def test_a_rerun_that_cannot_be_done_is_one_line(capsys, tmp_path, argv, fragment):
    (tmp_path / "report.json").write_text(json.dumps({"summary": []}))
    code, out, err = run(capsys, "run", "--rerun", str(tmp_path), *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and fragment in err, err
