"""Where the parts of REALM P1 (campus tour) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec

P1 = ProblemSpec(
    problem="P1", title="single-agent campus tour", package=__package__,
    env="env:CampusTourEnv", names="formats:shipped_p1_names", load="formats:load_p1",
    generate="generator:generate_p1", check="check:check", reference="references:reference_p1", viewer="render:VIEWER",
    upstream="formats:from_upstream_p1", upstream_keys=("distances", "time_windows"),
    upstream_marks=("distances", "time_windows"),
    heuristics=(NamedHeuristic("p1_insertion", "heuristics:InsertionTourPolicy",
                               "plans a route by cheapest feasible insertion, then visits it stop by stop"),),
    docs="docs/campus_tour.md", tests="tests/campus_tour",
)

SPECS = (P1,)
