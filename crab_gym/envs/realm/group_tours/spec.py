"""Where the parts of REALM P2 (multi-group campus tours) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits

P2_SPLITS = Splits(
    dev=(
        "p2_large_00", "p2_large_03", "p2_medium_00", "p2_medium_03", "p2_medium_06",
        "p2_small_00", "p2_small_03", "p2_small_06",
    ),
    test=(
        "p2_large_01", "p2_large_02", "p2_large_04", "p2_large_05", "p2_medium_01", "p2_medium_02",
        "p2_medium_04", "p2_medium_05", "p2_small_01", "p2_small_02", "p2_small_04", "p2_small_05",
    ),
    quick=(
        "p2_small_00", "p2_medium_00", "p2_small_03",
    ),
    description=("p2_<size>_<k> is generate_p2(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P2 = ProblemSpec(
    problem="P2", title="multi-group campus tours", package=__package__,
    env="env:GroupToursEnv", names="formats:shipped_p2_names", load="formats:load_p2",
    generate="generator:generate_p2", check="check:check", reference="references:reference_p2", viewer="render:VIEWER",
    upstream="formats:from_upstream_p2", upstream_keys=("visitor_groups", "tour_guides"),
    upstream_marks=("visitor_groups", "tour_guides"),
    heuristics=(NamedHeuristic("p2_earliest_start", "heuristics:EarliestStartPolicy",
                               "earliest-preferred group first, to the guide who can start it soonest"),),
    multiagent=True, splits=P2_SPLITS, docs="docs/group_tours.md", tests="tests/group_tours",
)

SPECS = (P2,)
