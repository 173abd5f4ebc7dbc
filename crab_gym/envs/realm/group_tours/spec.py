"""Where the parts of REALM P2 (multi-group campus tours) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

P2_SPLITS = Splits(
    dev=numbered("p2", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3)),
    test=numbered("p2", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("p2", small=(0, 3), medium=(0,)),
    description=("p2_<size>_<k> is generate_p2(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P2 = ProblemSpec(
    problem="P2", title="multi-group campus tours", package=__package__,
    env="env:GroupToursEnv", names="formats:shipped_p2_names", load="formats:load_p2",
    generate="generator:generate_p2", check="checker:check", reference="references:reference_p2", viewer="render:VIEWER",
    upstream="formats:from_upstream_p2", upstream_keys=("visitor_groups", "tour_guides"),
    upstream_marks=("visitor_groups", "tour_guides"),
    heuristics=(NamedHeuristic("p2_earliest_start", "heuristics:EarliestStartPolicy",
                               "earliest-preferred group first, to the guide who can start it soonest"),),
    multiagent=True, splits=P2_SPLITS, docs="docs/group_tours.md", tests="tests/group_tours",
    name_fields=("groups[].group_id", "guides[].guide_id"),
)

SPECS = (P2,)
