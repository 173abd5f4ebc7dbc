"""The numpy canvas: the bitmap font, text layout helpers, and labels in the env frames."""

import string

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crab_gym  # noqa: F401  (registers the env ids)
from crab_gym.envs.canvas import GLYPH_H, GLYPH_W, Canvas, LabelPlacer, abbreviate, glyph, ink_on, short_id

WHITE, RED = (255, 255, 255), (200, 0, 0)
REQUIRED = string.ascii_uppercase + string.digits + " .,:-+/()%#_><"


def ink(canvas: Canvas) -> np.ndarray:
    """Mask of pixels that are not the white background."""
    return np.any(canvas.pixels != 255, axis=2)


def drawn(text: str, scale: int = 1) -> np.ndarray:
    c = Canvas(Canvas.text_width(text, scale) + 4, Canvas.text_height(scale) + 4)
    c.text(2, 2, text, RED, scale)
    return ink(c)


def test_a1_sets_pixels_only_inside_its_box_in_the_given_colour():
    c = Canvas(40, 20)
    c.text(10, 5, "A1", RED)
    ys, xs = np.nonzero(ink(c))
    assert len(xs) > 10
    assert xs.min() >= 10 and xs.max() < 10 + Canvas.text_width("A1")
    assert ys.min() >= 5 and ys.max() < 5 + GLYPH_H
    assert {tuple(p) for p in c.pixels[ink(c)]} == {RED}
    # the gap column between the two glyphs stays blank
    assert not ink(c)[:, 10 + GLYPH_W].any()


def test_glyphs_cover_the_charset_and_are_distinct():
    bitmaps = {ch: glyph(ch) for ch in REQUIRED}
    for ch, bits in bitmaps.items():
        assert bits.shape == (GLYPH_H, GLYPH_W) and bits.dtype == bool
        assert bits.any() or ch == " "
    seen = {}
    for ch, bits in bitmaps.items():
        key = bits.tobytes()
        assert key not in seen, f"{ch!r} looks like {seen.get(key)!r}"
        seen[key] = ch
    for a, b in ("I1", "O0", "S5", "B8", "Z2", "-_", "/%"):
        assert not np.array_equal(drawn(a), drawn(b))


def test_lowercase_is_uppercase_and_unknown_is_a_box():
    assert np.array_equal(drawn("makespan"), drawn("MAKESPAN"))
    box = glyph("~")
    assert box.any() and np.array_equal(box, glyph("\u00e9")) and np.array_equal(box, glyph("{"))
    assert not any(np.array_equal(box, glyph(ch)) for ch in REQUIRED)


def test_width_arithmetic_and_scale():
    assert Canvas.text_width("") == 0
    assert Canvas.text_width("A") == 5
    assert Canvas.text_width("AB") == 11
    assert Canvas.text_width("09:30") == 29
    assert Canvas.text_width("AB", scale=2) == 22 and Canvas.text_height(2) == 14
    for text in ("X", "M0", "makespan 55 / ref 55"):
        mask = drawn(text, 2)
        xs = np.nonzero(mask.any(axis=0))[0]
        assert xs.max() - xs.min() + 1 <= Canvas.text_width(text, 2)
    # a scale-2 glyph is the scale-1 glyph with every pixel doubled
    assert np.array_equal(drawn("Q", 2)[2:16, 2:12], np.kron(glyph("Q"), np.ones((2, 2), dtype=bool)))


def test_label_alignment():
    c = Canvas(100, 20)
    x0, _, x1, _ = c.label(50, 5, "ABC", RED, align="right")
    assert x1 - 1 == 50 and x1 - x0 == Canvas.text_width("ABC") + 2
    x0, _, x1, _ = c.label(50, 5, "ABC", RED, align="centre")
    assert abs((x0 + x1) / 2 - 50) <= 1
    x0, y0, x1, y1 = c.label(98, 30, "ABC", RED)  # kept inside the canvas
    assert x1 <= 100 and y1 <= 20


@settings(max_examples=60, deadline=None)
@given(
    x=st.integers(-80, 120),
    y=st.integers(-30, 50),
    text=st.text(max_size=12),
    scale=st.integers(1, 3),
)
def test_clipping_never_raises_and_stays_inside(x, y, text, scale):
    c = Canvas(64, 24)
    c.text(x, y, text, RED, scale)
    mask = ink(c)
    if mask.any():
        ys, xs = np.nonzero(mask)
        assert xs.min() >= max(x, 0) and ys.min() >= max(y, 0)
        assert xs.max() < x + Canvas.text_width(text, scale) and ys.max() < y + Canvas.text_height(scale)


def test_clipped_text_matches_the_unclipped_part():
    full = Canvas(60, 20)
    full.text(10, 5, "W42", RED)
    part = Canvas(20, 9)
    part.text(-5, 2, "W42", RED)  # canvas window at (15, 3) of the full one
    assert np.array_equal(ink(part), ink(full)[3:12, 15:35])


def test_helpers():
    assert abbreviate("language_center", 11) == "LANG CENTER"
    assert abbreviate("dormitory_north", 11) == "DORM NORTH"
    assert abbreviate("swimming_pool", 11) == "SWIM POOL"  # was "SWIMMI POOL"
    assert abbreviate("botanical_garden", 11) == "BOT GARDEN"
    assert abbreviate("entrance", 11) == "ENTRANCE"
    assert all(len(abbreviate(n, 10)) <= 10 for n in ("international_office", "a_b_c_d_e_f", "x" * 30))
    assert short_id("group12") == "G12" and short_id("v1") == "V1" and short_id("alpha") == "ALPHA"
    assert ink_on((240, 228, 66)) == (0, 0, 0) and ink_on((0, 0, 0)) == (255, 255, 255)


def test_label_placer_avoids_earlier_labels_and_marks():
    c = Canvas(200, 100)
    c.disc(100, 50, 5, (0, 0, 0))
    placer = LabelPlacer(c)
    boxes = [placer.place(100, 50, name, RED) for name in ("FIRST", "SECOND", "THIRD", "FOURTH")]
    for i, a in enumerate(boxes):
        assert not (a[0] <= 100 <= a[2] and a[1] <= 50 <= a[3])  # not over the dot
        for b in boxes[i + 1 :]:
            assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1])


@pytest.mark.parametrize(
    "env_id, kwargs, first_word",
    [
        ("Realm-P1-v0", {"instance": "p1_medium_00"}, "clock "),
        ("Realm-P2-v0", {"instance": "p2_small_00"}, "assigned "),
        ("Realm-P3-v0", {"instance": "p3_small_01"}, "clock "),
        ("Realm-P4-v0", {"instance": "p4_small_01"}, "clock "),
        ("Realm-P5-v0", {"instance": "p5_small_01"}, "clock "),
        ("Realm-P11-v0", {"instance": "ft06"}, "makespan "),
    ],
)
def test_env_frames_carry_a_text_header(env_id, kwargs, first_word):
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape[1] <= 1000
    width = Canvas.text_width(first_word)
    expected = drawn(first_word)[2 : 2 + GLYPH_H, 2 : 2 + width]
    got = np.any(frame[4 : 4 + GLYPH_H, 6 : 6 + width] < 100, axis=2)  # dark header ink
    assert np.array_equal(got, expected)
