"""Where the parts of REALM P1 (campus tour) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

P1_SPLITS = Splits(
    dev=numbered("p1", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3)),
    test=numbered("p1", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("p1", small=(0, 3), medium=(0,)),
    description=("p1_<size>_<k> is generate_p1(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P1 = ProblemSpec(
    problem="P1", title="single-agent campus tour", package=__package__,
    env="env:CampusTourEnv", names="formats:shipped_p1_names", load="formats:load_p1",
    generate="generator:generate_p1", check="checker:check", reference="references:reference_p1", viewer="render:VIEWER",
    upstream="formats:from_upstream_p1", upstream_keys=("distances", "time_windows"),
    upstream_marks=("distances", "time_windows"),
    heuristics=(NamedHeuristic("p1_insertion", "heuristics:InsertionTourPolicy",
                               "plans a route by cheapest feasible insertion, then visits it stop by stop"),),
    idle_plan=False, splits=P1_SPLITS, docs="docs/campus_tour.md", tests="tests/campus_tour",
    name_fields=("locations[]", "start", "end"),
)

SPECS = (P1,)
