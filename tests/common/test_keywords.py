"""realm.common.keywords: the shared keyword arguments every REALM env takes."""

import pytest

from crab_gym.envs.realm.common.keywords import realm_keywords


def test_realm_keywords_needs_options_and_no_clash():
    def plain(self, instance=None):
        pass

    def clashing(self, instance=None, *, render_mode=None, **options):
        pass

    with pytest.raises(TypeError, match="must take \\*\\*options"):
        realm_keywords(plain)
    with pytest.raises(TypeError, match="names shared keywords itself: render_mode"):
        realm_keywords(clashing)
