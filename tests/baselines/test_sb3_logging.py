"""Training with the SB3 helpers leaves no ``SB3-<date>`` folders behind unless asked to."""

from __future__ import annotations

import tempfile

import pytest

PPO_TINY = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "policy_kwargs": {"net_arch": [8]}}


@pytest.fixture
def sb3():
    pytest.importorskip("sb3_contrib")
    from crab_gym.baselines import sb3 as helpers

    return helpers


def test_training_creates_no_log_folders(sb3, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # SB3's default log root
    (tmp_path / "tmp").mkdir()
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    model = sb3.train_maskable_ppo("Realm-P11-v0", 32, seed=0, ppo_kwargs=PPO_TINY, torch_threads=1)
    assert model.num_timesteps >= 32
    assert list((tmp_path / "tmp").glob("SB3-*")) == []
    assert list((tmp_path / "cwd").iterdir()) == []
    assert model.logger.dir is None


def test_a_given_logger_is_used(sb3, tmp_path, monkeypatch):
    from stable_baselines3.common.logger import configure

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    logger = configure(str(tmp_path / "logs"), ["csv"])
    model = sb3.train_maskable_ppo("Realm-P11-v0", 32, seed=0, ppo_kwargs=PPO_TINY, logger=logger, torch_threads=1)
    assert model.logger is logger
    assert "time/total_timesteps" in (tmp_path / "logs" / "progress.csv").read_text()
    assert list(tmp_path.glob("SB3-*")) == []


def test_quiet_logger_prints_only_when_verbose(sb3, capsys):
    sb3.quiet_logger(0).record("x", 1)
    sb3.quiet_logger(0).dump(0)
    assert capsys.readouterr().out == ""
    loud = sb3.quiet_logger(1)
    loud.record("train/x", 1)
    loud.dump(0)
    assert "train/" in capsys.readouterr().out
