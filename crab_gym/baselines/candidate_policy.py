"""A size-agnostic policy for sb3-contrib's ``MaskablePPO``: one score per candidate, shared weights.

A dispatching decision is a choice among candidates (jobs) whose number follows the instance.
:class:`CandidatePolicy` takes an observation of shape ``(n_candidates, n_features)`` (one row per
candidate, the flat action ``i`` choosing row ``i``), encodes each row with the same small
network, pools the rows into a context (mean and max over the legal ones), and scores each row
from its code and the context; the critic reads the context. No weight depends on
``n_candidates``, so a model trained on 15x15 instances plays 30x20 ones
(:func:`load_candidate_model`)::

    from sb3_contrib import MaskablePPO
    from crab_gym.baselines.candidate_policy import CandidatePolicy

    model = MaskablePPO(CandidatePolicy, env)   # env: observations (n, F), action_masks()

It plugs into SB3's ``MaskableActorCriticPolicy`` as its ``mlp_extractor`` (the scorer) with an
identity ``action_net``: PPO, masking, saving and loading are sb3-contrib's own.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym._optional import require

require("torch", "rl")
require("sb3_contrib", "rl", package="sb3-contrib")
import torch  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402
from torch import nn  # noqa: E402


class CandidateScorer(nn.Module):
    """Rows ``(batch, n, F)`` (flattened by SB3 to ``(batch, n * F)``) -> logits ``(batch, n)``
    and a critic code ``(batch, hidden)``. Column 0 of a row is its legality flag (1 or 0): the
    context pools over legal rows only."""

    def __init__(self, n_candidates: int, n_features: int, hidden: int = 64) -> None:
        super().__init__()
        self.n_features = n_features
        self.latent_dim_pi = n_candidates  # SB3 reads these two
        self.latent_dim_vf = hidden
        self.encoder = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.actor_code = nn.Linear(hidden, hidden)  # the actor's first layer on [code, context],
        self.actor_context = nn.Linear(2 * hidden, hidden, bias=False)  # split: the context once per state
        self.actor = nn.Sequential(nn.Tanh(), nn.Linear(hidden, 1))
        self.critic = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh())
        with torch.no_grad():  # start near uniform over the legal candidates
            self.actor[-1].weight.mul_(0.01)
            self.actor[-1].bias.zero_()

    def _encode(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = features.reshape(features.shape[0], -1, self.n_features)
        codes = self.encoder(rows)
        legal = (rows[..., :1] > 0.5).to(codes.dtype)
        count = legal.sum(dim=1).clamp(min=1.0)
        mean = (codes * legal).sum(dim=1) / count
        peak = torch.where(legal > 0, codes, torch.full_like(codes, -1.0)).max(dim=1).values
        return codes, torch.cat((mean, peak), dim=-1)

    def _logits(self, codes: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        hidden = self.actor_code(codes) + self.actor_context(context).unsqueeze(1)
        return self.actor(hidden).squeeze(-1)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        codes, context = self._encode(features)
        return self._logits(codes, context), self.critic(context)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self._logits(*self._encode(features))

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic(self._encode(features)[1])


class CandidatePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with a :class:`CandidateScorer` (see the module doc).

    Args (beyond SB3's): ``hidden``, the width of every layer; ``view``, the name of the
    candidate view the observations come from (saved with the model so that a player can build
    the same observations: :mod:`crab_gym.baselines.candidate_views`).
    """

    def __init__(self, observation_space: gym.spaces.Box, action_space: gym.spaces.Discrete, lr_schedule: Any,
                 hidden: int = 64, view: str | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Box) or len(observation_space.shape) != 2:
            raise ValueError(f"CandidatePolicy takes (n_candidates, n_features) Box observations, got {observation_space}")
        self.hidden = int(hidden)
        self.view = view
        kwargs.setdefault("ortho_init", False)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        n_candidates, n_features = self.observation_space.shape
        self.mlp_extractor = CandidateScorer(n_candidates, n_features, self.hidden)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the scorer's logits are the distribution's
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(hidden=self.hidden, view=self.view)
        return data


def load_candidate_model(path: str, n_candidates: int, n_features: int | None = None) -> Any:
    """A saved ``MaskablePPO(CandidatePolicy, ...)`` model rebuilt for ``n_candidates`` rows:
    the weights are the file's (none depends on the count), the spaces the new size's."""
    from sb3_contrib import MaskablePPO

    spaces = _saved_spaces(path)
    features = int(n_features if n_features is not None else spaces.shape[-1])
    custom = {
        "observation_space": gym.spaces.Box(-np.inf, np.inf, (int(n_candidates), features), np.float32),
        "action_space": gym.spaces.Discrete(int(n_candidates)),
    }
    return MaskablePPO.load(path, device="cpu", custom_objects=custom)


def _saved_spaces(path: str) -> gym.spaces.Box:
    from stable_baselines3.common.save_util import load_from_zip_file

    data, _, _ = load_from_zip_file(path, device="cpu", load_data=True)
    space = (data or {}).get("observation_space")
    if not isinstance(space, gym.spaces.Box) or len(space.shape) != 2:
        raise ValueError(f"{path}: not a CandidatePolicy model (its observations are {space})")
    return space
