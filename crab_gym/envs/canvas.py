"""A tiny numpy raster canvas for ``render_mode="rgb_array"``.

The core and the REALM envs import no optional extra, so frames are drawn directly into a
``uint8`` array instead of through matplotlib. Only the primitives the envs need are here:
filled rectangles, lines, discs and a categorical palette.
"""

from __future__ import annotations

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


def colour(index: int) -> tuple[int, int, int]:
    """The palette colour for a category index (cycles)."""
    return PALETTE[index % len(PALETTE)]


class Canvas:
    """An RGB image with drawing primitives in pixel coordinates (x right, y down)."""

    def __init__(self, width: int, height: int, background: tuple[int, int, int] = (255, 255, 255)):
        self.width = int(width)
        self.height = int(height)
        self.pixels = np.empty((self.height, self.width, 3), dtype=np.uint8)
        self.pixels[...] = background

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

    def image(self) -> np.ndarray:
        """A copy of the frame, shape (height, width, 3), dtype uint8."""
        return self.pixels.copy()
