"""Taillard's seeded instance generator (E. Taillard, EJOR 64(2):278-285, 1993).

Taillard drew his benchmark with a portable linear congruential generator (Lehmer's
"minimal standard", multiplier 16807 modulo 2^31 - 1, evaluated with Schrage's method) and
published the two seeds of every instance. For each job in turn the durations are drawn
uniformly from 1..99 with the *time seed*; then every job's machine order starts as the
identity and, for k = 1..m, operation k swaps its machine with that of a position drawn
uniformly from k..m with the *machine seed*.

This implementation reproduces all 80 published instances ta01-ta80 from their published
seeds, matrix for matrix (checked against the shipped library by ``tests/jobshop``).
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.realm.jobshop.model import JSSPInstance

_M = 2147483647  # 2^31 - 1
_A = 16807
_Q = 127773  # _M // _A
_R = 2836  # _M % _A


def taillard_next(seed: int) -> int:
    """One step of the generator: ``seed * 16807 mod (2^31 - 1)`` without overflow."""
    k = seed // _Q
    seed = _A * (seed - k * _Q) - k * _R
    return seed + _M if seed < 0 else seed


def taillard_unif(seed: int, low: int, high: int) -> tuple[int, int]:
    """A uniform integer in ``low..high`` and the next seed (Taillard's ``unif``)."""
    seed = taillard_next(seed)
    return low + int(seed / _M * (high - low + 1)), seed


def generate_taillard(
    n_jobs: int,
    n_machines: int,
    time_seed: int,
    machine_seed: int,
    *,
    low: int = 1,
    high: int = 99,
    name: str | None = None,
) -> JSSPInstance:
    """The instance Taillard's generator draws for the given size and seeds.

    Seeds must lie in ``1..2^31 - 2`` (0 is a fixed point of the generator).
    """
    if n_jobs < 1 or n_machines < 1:
        raise ValueError(f"need n_jobs >= 1 and n_machines >= 1, got {n_jobs}, {n_machines}")
    for label, seed in (("time_seed", time_seed), ("machine_seed", machine_seed)):
        if not 0 < int(seed) < _M:
            raise ValueError(f"{label} must be in 1..{_M - 1}, got {seed}")
    if not 0 <= low <= high:
        raise ValueError(f"need 0 <= low <= high, got {low}, {high}")
    t = int(time_seed)
    durations = []
    span = high - low + 1
    for _ in range(n_jobs):  # taillard_unif inlined: this loop is most of a generated reset
        row = []
        for _ in range(n_machines):
            k = t // _Q
            t = _A * (t - k * _Q) - k * _R
            if t < 0:
                t += _M
            row.append(low + int(t / _M * span))
        durations.append(row)
    s = int(machine_seed)
    machines = []
    for _ in range(n_jobs):
        row = list(range(n_machines))
        for k in range(n_machines):
            r, s = taillard_unif(s, k, n_machines - 1)
            row[k], row[r] = row[r], row[k]
        machines.append(row)
    return JSSPInstance(
        durations=durations,
        machines=machines,
        name=name or f"taillard_{n_jobs}x{n_machines}_{time_seed}_{machine_seed}",
        n_machines=n_machines,
        citation="generated with Taillard's 1993 scheme",
        time_seed=int(time_seed),
        machine_seed=int(machine_seed),
    )


def random_instance(
    n_jobs: int,
    n_machines: int,
    rng: np.random.Generator | int | None = None,
    *,
    low: int = 1,
    high: int = 99,
) -> JSSPInstance:
    """A fresh instance by Taillard's scheme, its two seeds drawn from ``rng``.

    The seeds are kept on the instance (``time_seed``/``machine_seed``), so any generated
    instance can be rebuilt with :func:`generate_taillard` or written in Taillard's format.
    """
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    time_seed, machine_seed = (int(v) for v in rng.integers(1, _M, size=2))
    return generate_taillard(n_jobs, n_machines, time_seed, machine_seed, low=low, high=high)


#: (jobs, machines) of each size class of :func:`generate_p11`.
SIZES: dict[str, tuple[int, int]] = {"small": (6, 6), "medium": (10, 10), "large": (15, 15)}


def generate_p11(size: str = "small", seed: int = 0, *, n_jobs: int | None = None,
                 n_machines: int | None = None) -> JSSPInstance:
    """A seeded instance of a size class (``small`` 6x6, ``medium`` 10x10, ``large`` 15x15;
    ``n_jobs``/``n_machines`` override it): the ``generate`` role every problem shares
    (``generate(size, seed)``), over :func:`random_instance`."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    jobs, machines = SIZES[size]
    return random_instance(n_jobs or jobs, n_machines or machines, seed)


#: Taillard's published (n_jobs, n_machines, time seed, machine seed) of ta01-ta80.
TAILLARD_SEEDS: dict[str, tuple[int, int, int, int]] = {}


def _register(n: int, m: int, first: int, seeds: list[tuple[int, int]]) -> None:
    for offset, (ts, ms) in enumerate(seeds):
        TAILLARD_SEEDS[f"ta{first + offset:02d}"] = (n, m, ts, ms)


_register(15, 15, 1, [
    (840612802, 398197754), (1314640371, 386720536), (1227221349, 316176388),
    (342269428, 1806358582), (1603221416, 1501949241), (1357584978, 1734077082),
    (44531661, 1374316395), (302545136, 2092186050), (1153780144, 1393392374),
    (73896786, 1544979948),
])
_register(20, 15, 11, [
    (533484900, 317419073), (1894307698, 1474268163), (874340513, 509669280),
    (1124986343, 1209573668), (1463788335, 529048107), (1056908795, 25321885),
    (195672285, 1717580117), (961965583, 1353003786), (1610169733, 1734469503),
    (532794656, 998486810),
])
_register(20, 20, 21, [
    (1035939303, 773961798), (5997802, 1872541150), (1357503601, 722225039),
    (806159563, 1166962073), (1902815253, 1879990068), (1503184031, 1850351876),
    (1032645967, 99711329), (229894219, 1158117804), (823349822, 108033225),
    (1297900341, 489486403),
])
_register(30, 15, 31, [
    (98640593, 1981283465), (1839268120, 248890888), (573875290, 2081512253),
    (1670898570, 788294565), (1118914567, 1074349202), (178750207, 294279708),
    (1549372605, 596993084), (798174738, 151685779), (553410952, 1329272528),
    (1661531649, 1173386294),
])
_register(30, 20, 41, [
    (1841414609, 1357882888), (2116959593, 1546338557), (796392706, 1230864158),
    (532496463, 254174057), (2020525633, 978943053), (524444252, 185526083),
    (1569394691, 487269855), (1460267840, 1631446539), (198324822, 1937476577),
    (38071822, 1541985579),
])
_register(50, 15, 51, [
    (17271, 718939), (660481279, 449650254), (352229765, 949737911),
    (1197518780, 166840558), (1376020303, 483922052), (2106639239, 955932362),
    (1765352082, 1209982549), (1105092880, 1349003108), (907248070, 919544535),
    (2011630757, 1845447001),
])
_register(50, 20, 61, [
    (8493988, 2738939), (1991925010, 709517751), (342093237, 786960785),
    (1634043183, 973178279), (341706507, 286513148), (320167954, 1411193018),
    (1089696753, 298068750), (433032965, 1589656152), (615974477, 331205412),
    (236150141, 592292984),
])
_register(100, 20, 71, [
    (302034063, 1203569070), (1437643198, 1692025209), (1792475497, 1039908559),
    (1647273132, 1012841433), (696480901, 1689682358), (1785569423, 1092647459),
    (117806902, 739059626), (1639154709, 1319962509), (2007423389, 749368241),
    (682761130, 262763021),
])


def taillard_benchmark(name: str) -> JSSPInstance:
    """Regenerate ``ta01``..``ta80`` from the published seeds (data only, no bounds)."""
    key = name.lower()
    if key not in TAILLARD_SEEDS:
        raise KeyError(f"unknown Taillard instance {name!r}; expected ta01..ta80")
    n, m, ts, ms = TAILLARD_SEEDS[key]
    return generate_taillard(n, m, ts, ms, name=key)
