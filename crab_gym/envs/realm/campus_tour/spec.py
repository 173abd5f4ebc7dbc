"""Where the parts of REALM P1 (campus tour) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits

P1_SPLITS = Splits(
    dev=(
        "p1_large_00", "p1_large_03", "p1_medium_00", "p1_medium_03", "p1_medium_06",
        "p1_small_00", "p1_small_03", "p1_small_06",
    ),
    test=(
        "p1_large_01", "p1_large_02", "p1_large_04", "p1_large_05", "p1_medium_01", "p1_medium_02",
        "p1_medium_04", "p1_medium_05", "p1_small_01", "p1_small_02", "p1_small_04", "p1_small_05",
    ),
    quick=(
        "p1_small_00", "p1_medium_00", "p1_small_03",
    ),
    description=("p1_<size>_<k> is generate_p1(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P1 = ProblemSpec(
    problem="P1", title="single-agent campus tour", package=__package__,
    env="env:CampusTourEnv", names="formats:shipped_p1_names", load="formats:load_p1",
    generate="generator:generate_p1", check="check:check", reference="references:reference_p1", viewer="render:VIEWER",
    upstream="formats:from_upstream_p1", upstream_keys=("distances", "time_windows"),
    upstream_marks=("distances", "time_windows"),
    heuristics=(NamedHeuristic("p1_insertion", "heuristics:InsertionTourPolicy",
                               "plans a route by cheapest feasible insertion, then visits it stop by stop"),),
    idle_plan=False, splits=P1_SPLITS, docs="docs/campus_tour.md", tests="tests/campus_tour",
)

SPECS = (P1,)
