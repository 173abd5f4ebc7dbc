"""realm.common.keywords: the shared keyword arguments every REALM env takes."""

import inspect

import pytest

from crab_gym.envs.realm.campus_tour.env import CampusTourEnv
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.group_tours.env import GroupToursEnv


def test_realm_keywords_needs_options_and_no_clash():
    def plain(self, instance=None):
        pass

    def clashing(self, instance=None, *, render_mode=None, **options):
        pass

    with pytest.raises(TypeError, match="must take \\*\\*options"):
        realm_keywords(plain)
    with pytest.raises(TypeError, match="names shared keywords itself: render_mode"):
        realm_keywords(clashing)


@pytest.mark.parametrize("cls", [CampusTourEnv, GroupToursEnv])
def test_signature_lists_the_shared_keywords_with_their_defaults(cls):
    params = inspect.signature(cls).parameters
    shared = {"reference": None, "reference_solve": "deferred", "viewer": None, "render_mode": None,
              "invalid_action_penalty": 0.0,
              "progress_weight": 0.5, "optimality_weight": 0.5, "obfuscate": False}
    assert list(params) == ["instance", "generator", *shared]
    assert {k: params[k].default for k in shared} == shared
    assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in ["generator", *shared])
    env = cls(render_mode="ansi", invalid_action_penalty=0.25, progress_weight=0.1, optimality_weight=0.9, reference=3,
              reference_solve="inline")
    assert (env.render_mode, env.invalid_action_penalty, env.progress_weight, env.optimality_weight,
            env.reference_solve) == ("ansi", 0.25, 0.1, 0.9, "inline")
    assert env.reference.value == 3.0
