"""The report as people see it (issue 38, item 11): on a terminal the summary table fits the
screen's width and the legend waits for ``--legend``; ids in the index's order; in
``report.png`` a metric that does not apply says ``n/a`` where a 0 draws a line."""

from __future__ import annotations

import pytest

from crab_gym.evaluation.episode import EpisodeResult, env_order
from crab_gym.evaluation.report import BenchmarkReport
from crab_gym.evaluation.terminal import LEGEND_HINT

IDS = ["Realm-J2-v0", "Realm-P10-v0", "Realm-P1-v0", "Realm-P11-v0", "Realm-P2-v0", "CrabDesktop-v0"]


def _result(env_id: str, policy: str, seed: int, metrics: dict) -> EpisodeResult:
    return EpisodeResult(env_id, {"instance": f"x_{seed}"}, policy, seed, index=seed, max_steps=50,
                         episode_return=0.5, completeness=1.0, terminated=True, truncated=False, success=True,
                         metrics=metrics, split="test", instance=f"x_{seed}")


def _report() -> BenchmarkReport:
    def metrics(env_id: str, seed: int) -> dict:
        single = env_id in ("Realm-P1-v0", "Realm-P11-v0", "Realm-J2-v0")  # coordination does not apply
        return {"optimality": 0.8 + 0.01 * seed, "constraint_satisfaction": 1.0,
                "coordination": None if single else 0.5, "adaptation": None}
    return BenchmarkReport([_result(e, p, s, metrics(e, s)) for e in IDS[:5] for p in ("random", "mwkr")
                            for s in range(3)])


def test_ids_follow_the_index_order():
    assert sorted(IDS, key=env_order) == ["Realm-P1-v0", "Realm-P2-v0", "Realm-P10-v0", "Realm-P11-v0",
                                          "Realm-J2-v0", "CrabDesktop-v0"]
    envs = list(dict.fromkeys(r["env"] for r in _report().summary()))
    assert envs == ["Realm-P1-v0", "Realm-P2-v0", "Realm-P10-v0", "Realm-P11-v0", "Realm-J2-v0"]


@pytest.mark.parametrize("width", [80, 120])
def test_the_terminal_table_fits_the_width_and_leaves_the_legend_out(width):
    pytest.importorskip("rich")
    text = _report().to_terminal(width=width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "**Columns**" not in text and lines[-1] == LEGEND_HINT
    assert " P11 " in text and "Realm-" not in text  # short ids
    assert text.count("n/a") == 6  # coordination of the three single-agent ids, both policies
    assert "0.810" in text and "±0.0" in text  # the mean above its interval's wider half


def test_the_legend_is_there_on_request_and_in_the_markdown():
    report = _report()
    assert report.legend_markdown().startswith("**Columns**")
    assert "`optimality`:" in report.legend_markdown()
    assert "**Columns**" in report.to_markdown()


def test_the_plot_says_na_where_a_metric_does_not_apply(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from crab_gym.evaluation import report as report_module

    rows = [{"env": "Realm-P1-v0", "policy": "a", "coordination": None, "optimality": 0.0},
            {"env": "Realm-P1-v0", "policy": "b", "coordination": 0.5, "optimality": 0.7}]
    fig, (na_ax, zero_ax) = plt.subplots(2)
    report_module._bars(na_ax, rows, ["Realm-P1-v0"], "coordination")
    report_module._bars(zero_ax, rows, ["Realm-P1-v0"], "optimality")
    assert [t.get_text() for t in na_ax.texts] == ["n/a"]  # policy a: does not apply
    assert len(zero_ax.texts) == 0  # a 0 is a value: a bar, not n/a
    zero_bar = zero_ax.patches[0]
    assert zero_bar.get_height() == 0.0 and zero_bar.get_linewidth() > 0  # drawn as a line
    plt.close(fig)
