"""Travel minutes over roads, as the routing families (P3/P4 ride-sharing, P5/P8 wedding) build
them: a dense matrix of direct roads, then shortest paths, since a driver may pass through a
place without stopping (upstream's listed times break the triangle inequality)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Minutes standing in for "no road" inside the shortest-path computation.
NO_ROAD = 10**7


def road_matrix(roads: Sequence[Sequence[int | None]]) -> np.ndarray:
    """``roads[i][j]`` minutes on the direct road ``i -> j`` (None: no road) as an int64
    matrix with :data:`NO_ROAD` for missing roads and 0 on the diagonal."""
    n = len(roads)
    base = np.full((n, n), NO_ROAD, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if i != j and roads[i][j] is not None:
                base[i, j] = int(roads[i][j])
    np.fill_diagonal(base, 0)
    return base


def shortest_paths(weights: np.ndarray) -> np.ndarray:
    """Floyd-Warshall on a dense matrix (:data:`NO_ROAD` = missing road); integer minutes."""
    d = np.array(weights, dtype=np.int64, copy=True)
    np.fill_diagonal(d, 0)
    for k in range(d.shape[0]):
        np.minimum(d, d[:, k : k + 1] + d[k : k + 1, :], out=d)
    return d
