"""A tiny numpy raster canvas for ``render_mode="rgb_array"``.

The core and the REALM envs import no optional extra, so frames are drawn directly into a
``uint8`` array instead of through matplotlib. Only the primitives the envs need are here:
filled rectangles, lines, discs, a categorical palette and text in a small hand-drawn
5x7 bitmap font (so frames can carry labels without a font library).
"""

from __future__ import annotations

import math

import numpy as np

#: A colour-blind-friendly categorical palette (Okabe-Ito, then Tableau extras), RGB.
PALETTE: tuple[tuple[int, int, int], ...] = (
    (0, 114, 178),
    (230, 159, 0),
    (0, 158, 115),
    (204, 121, 167),
    (86, 180, 233),
    (213, 94, 0),
    (240, 228, 66),
    (0, 0, 0),
    (140, 86, 75),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
)


# A hand-drawn 5x7 bitmap font: each glyph is 7 rows of 5 columns, "#" = ink.
# Lowercase is drawn as uppercase; any other character is drawn as a small box.
_GLYPH_ROWS: dict[str, str] = {
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "###.. #..#. #...# #...# #...# #..#. ###..",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    " ": "..... ..... ..... ..... ..... ..... .....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    "-": "..... ..... ..... .###. ..... ..... .....",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "/": "....# ....# ...#. ..#.. .#... #.... #....",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "%": "##..# ##..# ...#. ..#.. .#... #..## #..##",
    "#": ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.",
    "_": "..... ..... ..... ..... ..... ..... #####",
    ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    "=": "..... ..... ##### ..... ##### ..... .....",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
    "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
    "'": "..#.. ..#.. .#... ..... ..... ..... .....",
    "*": "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
}
_UNKNOWN_ROWS = "..... ..... .###. .#.#. .###. ..... ....."

#: Glyph size in pixels at ``scale=1`` (one blank column separates glyphs).
GLYPH_W, GLYPH_H, GLYPH_GAP = 5, 7, 1


def _bitmap(rows: str) -> np.ndarray:
    grid = np.array([[ch == "#" for ch in row] for row in rows.split()], dtype=bool)
    assert grid.shape == (GLYPH_H, GLYPH_W), rows
    return grid


_GLYPHS: dict[str, np.ndarray] = {ch: _bitmap(rows) for ch, rows in _GLYPH_ROWS.items()}
_UNKNOWN = _bitmap(_UNKNOWN_ROWS)


def glyph(ch: str) -> np.ndarray:
    """The boolean bitmap (7 rows x 5 columns) drawn for one character."""
    return _GLYPHS.get(ch.upper(), _UNKNOWN)


def colour(index: int) -> tuple[int, int, int]:
    """The palette colour for a category index (cycles)."""
    return PALETTE[index % len(PALETTE)]


class Canvas:
    """An RGB image with drawing primitives in pixel coordinates (x right, y down)."""

    def __init__(self, width: int, height: int, background: tuple[int, int, int] = (255, 255, 255)):
        self.width = int(width)
        self.height = int(height)
        self.background = np.asarray(background, dtype=np.uint8)
        self.pixels = np.empty((self.height, self.width, 3), dtype=np.uint8)
        self.pixels[...] = self.background

    def rect(self, x0: float, y0: float, x1: float, y1: float, rgb: tuple[int, int, int]) -> None:
        """Fill the axis-aligned rectangle [x0, x1) x [y0, y1), clipped to the canvas."""
        xa, xb = sorted((int(round(x0)), int(round(x1))))
        ya, yb = sorted((int(round(y0)), int(round(y1))))
        xa, ya = max(xa, 0), max(ya, 0)
        xb, yb = min(xb, self.width), min(yb, self.height)
        if xa < xb and ya < yb:
            self.pixels[ya:yb, xa:xb] = rgb

    def outline(self, x0: float, y0: float, x1: float, y1: float, rgb: tuple[int, int, int]) -> None:
        """Draw a one-pixel rectangle border."""
        self.line(x0, y0, x1, y0, rgb)
        self.line(x1, y0, x1, y1, rgb)
        self.line(x1, y1, x0, y1, rgb)
        self.line(x0, y1, x0, y0, rgb)

    def line(
        self, x0: float, y0: float, x1: float, y1: float, rgb: tuple[int, int, int], width: int = 1
    ) -> None:
        """Draw a straight segment by dense sampling (clipped), ``width`` pixels thick."""
        n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        xs = np.rint(np.linspace(x0, x1, n)).astype(int)
        ys = np.rint(np.linspace(y0, y1, n)).astype(int)
        half = max(width, 1) // 2
        for dx in range(-half, half + 1):
            for dy in range(-half, half + 1):
                px, py = xs + dx, ys + dy
                ok = (px >= 0) & (px < self.width) & (py >= 0) & (py < self.height)
                self.pixels[py[ok], px[ok]] = rgb

    def disc(self, cx: float, cy: float, radius: float, rgb: tuple[int, int, int]) -> None:
        """Fill a disc centred at (cx, cy)."""
        r = int(np.ceil(radius))
        y, x = np.ogrid[-r : r + 1, -r : r + 1]
        inside = x * x + y * y <= radius * radius
        for oy, ox in zip(*np.nonzero(inside)):
            px, py = int(round(cx)) + ox - r, int(round(cy)) + oy - r
            if 0 <= px < self.width and 0 <= py < self.height:
                self.pixels[py, px] = rgb

    @staticmethod
    def text_width(string: str, scale: int = 1) -> int:
        """Width in pixels of ``string`` drawn by :meth:`text` (0 for an empty string)."""
        n = len(string)
        return 0 if n == 0 else (n * (GLYPH_W + GLYPH_GAP) - GLYPH_GAP) * max(int(scale), 1)

    @staticmethod
    def text_height(scale: int = 1) -> int:
        """Height in pixels of one line of :meth:`text`."""
        return GLYPH_H * max(int(scale), 1)

    def text(self, x: float, y: float, string: str, rgb: tuple[int, int, int], scale: int = 1) -> None:
        """Draw ``string`` with its top-left corner at (x, y); each font pixel becomes a
        ``scale`` x ``scale`` block. Whatever falls outside the canvas is clipped."""
        scale = max(int(scale), 1)
        x0, y0 = int(round(x)), int(round(y))
        step = (GLYPH_W + GLYPH_GAP) * scale
        for i, ch in enumerate(string):
            gx = x0 + i * step
            if gx >= self.width:
                break
            if gx + GLYPH_W * scale <= 0 or ch == " ":
                continue
            bits = glyph(ch)
            if scale > 1:
                bits = np.kron(bits, np.ones((scale, scale), dtype=bool)).astype(bool)
            h, w = bits.shape
            xa, ya = max(gx, 0), max(y0, 0)
            xb, yb = min(gx + w, self.width), min(y0 + h, self.height)
            if xa >= xb or ya >= yb:
                continue
            sub = bits[ya - y0 : yb - y0, xa - gx : xb - gx]
            self.pixels[ya:yb, xa:xb][sub] = rgb

    def label(
        self,
        x: float,
        y: float,
        string: str,
        rgb: tuple[int, int, int] = (20, 20, 20),
        *,
        scale: int = 1,
        align: str = "left",
        background: tuple[int, int, int] | None = None,
        keep_inside: bool = True,
    ) -> tuple[int, int, int, int]:
        """Draw ``string`` anchored at (x, y) (``align`` = "left", "centre" or "right" of x;
        y is the top), optionally on a background box with a 1-pixel margin, shifted to stay
        inside the canvas when ``keep_inside``. Returns the box (x0, y0, x1, y1) drawn."""
        w, h = self.text_width(string, scale), self.text_height(scale)
        left = x - (w / 2 if align == "centre" else w if align == "right" else 0)
        left, top = int(round(left)), int(round(y))
        if keep_inside:
            left = min(max(left, 1), max(self.width - w - 1, 1))
            top = min(max(top, 1), max(self.height - h - 1, 1))
        if background is not None:
            self.rect(left - 1, top - 1, left + w + 1, top + h + 1, background)
        self.text(left, top, string, rgb, scale)
        return left - 1, top - 1, left + w + 1, top + h + 1

    def image(self) -> np.ndarray:
        """A copy of the frame, shape (height, width, 3), dtype uint8."""
        return self.pixels.copy()


def _first_syllable(word: str) -> str:
    """The word up to the end of its first syllable, as people shorten a word: the first
    vowels and the one or two consonants after them (a doubled one once): SWIMMING -> SWIM,
    BOTANICAL -> BOT, DORMITORY -> DORM, ENGINEERING -> ENG, LANGUAGE -> LANG."""
    vowels = "AEIOUY"
    i = 0
    while i < len(word) and word[i] not in vowels:
        i += 1
    start = i
    while i < len(word) and word[i] in vowels:
        i += 1
    if i - start > 1:  # two vowels in a row start a new syllable: SCIENCE -> SCI
        return word[: start + 1]
    end = i
    while end < len(word) and end - i < 2 and word[end] not in vowels:
        if end > i and word[end] == word[end - 1]:
            break
        end += 1
    return word[: max(end, 1)]


def abbreviate(name: str, max_chars: int) -> str:
    """A short upper-case label for a place name: underscores become spaces; if it is too
    long, leading words are shortened to their first syllable (the last word is kept whole
    while it fits), then cut, e.g. ``abbreviate("swimming_pool", 11) == "SWIM POOL"``."""
    words = name.replace("_", " ").replace("-", " ").upper().split()
    full = " ".join(words)
    if len(full) <= max_chars or not words:
        return full[:max_chars]
    if len(words) > 1:
        syllables = " ".join([_first_syllable(w) for w in words[:-1]] + [words[-1]])
        if len(syllables) <= max_chars:
            return syllables
        last = words[-1]
        room = max_chars - len(last) - (len(words) - 1)  # letters left for the leading words
        if room >= 2 * (len(words) - 1):
            share = room // (len(words) - 1)
            return " ".join([_first_syllable(w)[:share] for w in words[:-1]] + [last])
        for k in range(max_chars, 0, -1):  # cut every word to k letters
            short = " ".join(w[:k] for w in words)
            if len(short) <= max_chars:
                return short
    return full[:max_chars]


class LabelPlacer:
    """Greedy placement of small text labels next to points: each label goes to the side of
    its point that covers the least already drawn (non-background pixels, earlier labels and
    regions reserved with :meth:`block`), so place labels after drawing the marks."""

    def __init__(self, canvas: Canvas, scale: int = 1) -> None:
        self.canvas, self.scale = canvas, scale
        self.taken = np.zeros((canvas.height, canvas.width), dtype=bool)

    def block(self, x0: float, y0: float, x1: float, y1: float) -> None:
        """Reserve a region (a mark drawn later, a key) that labels should avoid."""
        c = self.canvas
        xa, xb = max(int(x0), 0), min(int(np.ceil(x1)), c.width)
        ya, yb = max(int(y0), 0), min(int(np.ceil(y1)), c.height)
        if xa < xb and ya < yb:
            self.taken[ya:yb, xa:xb] = True

    def _cost(self, box: tuple[int, int, int, int]) -> float:
        c = self.canvas
        x0, y0, x1, y1 = box
        if x0 < 0 or y0 < 0 or x1 > c.width or y1 > c.height:
            return math.inf
        ink = np.any(c.pixels[y0:y1, x0:x1] != c.background, axis=2).sum()
        return float(ink) + 50.0 * float(self.taken[y0:y1, x0:x1].sum())

    def place(
        self,
        x: float,
        y: float,
        string: str,
        rgb: tuple[int, int, int] = (20, 20, 20),
        *,
        gap: float = 8,
        background: tuple[int, int, int] | None = None,
    ) -> tuple[int, int, int, int]:
        """Draw ``string`` beside the point (x, y) at the candidate side (right, left, above,
        below, then the diagonals) that covers least; returns the box drawn."""
        c, s = self.canvas, self.scale
        w, h = c.text_width(string, s), c.text_height(s)
        candidates = [
            (x + gap, y - h / 2), (x - gap - w, y - h / 2),
            (x - w / 2, y - gap - h), (x - w / 2, y + gap),
            (x + gap - 2, y - gap - h + 2), (x + gap - 2, y + gap - 2),
            (x - gap - w + 2, y - gap - h + 2), (x - gap - w + 2, y + gap - 2),
        ]
        best, best_cost = candidates[0], math.inf
        for left, top in candidates:
            lx, ty = int(round(left)), int(round(top))
            cost = self._cost((lx - 1, ty - 1, lx + w + 1, ty + h + 1))
            if cost < best_cost:
                best, best_cost = (lx, ty), cost
            if cost == 0:
                break
        drawn = c.label(best[0], best[1], string, rgb, scale=s, background=background)
        self.block(*drawn)
        return drawn


def ink_on(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """Black or white, whichever reads better on a fill of colour ``rgb``."""
    r, g, b = rgb
    return (0, 0, 0) if 0.299 * r + 0.587 * g + 0.114 * b > 140 else (255, 255, 255)


def short_id(ident: str) -> str:
    """A compact form of an id such as ``group12`` -> ``G12`` (first letter + trailing digits)."""
    digits = ident[len(ident.rstrip("0123456789")):]
    return (ident[:1] + digits).upper() if digits and len(ident) > len(digits) else ident.upper()
