"""Where the parts of REALM P5 and P8 (wedding logistics, without and with disruptions) live."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits

GREEDY = NamedHeuristic("wedding_greedy", "heuristics:greedy_action",
                        "each free vehicle to the legal guest or errand it can begin soonest, unloading at the venue",
                        style="action")

P5_SPLITS = Splits(
    dev=(
        "p5_large_00", "p5_large_03", "p5_medium_00", "p5_medium_03", "p5_medium_06",
        "p5_small_00", "p5_small_03", "p5_small_06",
    ),
    test=(
        "p5_large_01", "p5_large_02", "p5_large_04", "p5_large_05", "p5_medium_01", "p5_medium_02",
        "p5_medium_04", "p5_medium_05", "p5_small_01", "p5_small_02", "p5_small_04", "p5_small_05",
    ),
    quick=(
        "p5_small_00", "p5_medium_00", "p5_small_03",
    ),
    description=("p5_<size>_<k> is generate_p5(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P5 = ProblemSpec(
    problem="P5", title="wedding logistics", package=__package__,
    env="env:WeddingEnv", names="formats:shipped_p5_names", load="formats:load_p5",
    generate="generator:generate_p5", check="check:check", reference="references:p5_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p5", upstream_keys=("guests", "errands", "travel_times"),
    upstream_marks=("travel_times",),
    heuristics=(GREEDY,), multiagent=True, splits=P5_SPLITS, docs="docs/wedding.md", tests="tests/wedding",
)

P8_SPLITS = Splits(
    dev=(
        "p8_large_00", "p8_large_03", "p8_medium_00", "p8_medium_03", "p8_medium_06",
        "p8_small_00", "p8_small_03", "p8_small_06",
    ),
    test=(
        "p8_large_01", "p8_large_02", "p8_large_04", "p8_large_05", "p8_medium_01", "p8_medium_02",
        "p8_medium_04", "p8_medium_05", "p8_small_01", "p8_small_02", "p8_small_04", "p8_small_05",
    ),
    quick=(
        "p8_small_00", "p8_medium_00", "p8_small_03",
    ),
    description=("p8_<size>_<k> is generate_p8(size, seed=k, draw=d); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P8 = ProblemSpec(
    problem="P8", title="wedding logistics with disruptions", package=__package__,
    env="env_disruptions:WeddingDisruptionEnv", names="formats:shipped_p8_names", load="formats:load_p8",
    generate="generator:generate_p8", check="check:check", reference="references:p8_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p8", upstream_keys=("guests", "errands", "travel_times", "disruptions"),
    upstream_marks=("travel_times",),
    heuristics=(GREEDY,), multiagent=True, disruptions=True, splits=P8_SPLITS, docs="docs/wedding.md", tests="tests/wedding",
)

SPECS = (P5, P8)
