"""Where the parts of REALM P3 and P4 (urban ride-sharing, without and with disruptions) live."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec

GREEDY = NamedHeuristic("ridesharing_greedy", "heuristics:greedy_action",
                        "each free vehicle to the legal stop it can serve soonest", style="action")

P3 = ProblemSpec(
    problem="P3", title="urban ride-sharing", package=__package__,
    env="env:RideSharingEnv", names="formats:shipped_p3_names", load="formats:load_p3",
    generate="generator:generate_p3", check="check:check", reference="references:p3_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p3", upstream_keys=("city_map", "ride_requests"),
    upstream_marks=("city_map", "ride_requests"),
    heuristics=(GREEDY,), multiagent=True, docs="docs/ridesharing.md", tests="tests/ridesharing",
)

P4 = ProblemSpec(
    problem="P4", title="ride-sharing with disruptions", package=__package__,
    env="env_disruptions:RideSharingDisruptionEnv", names="formats:shipped_p4_names", load="formats:load_p4",
    generate="generator:generate_p4", check="check:check", reference="references:p4_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p4", upstream_keys=("city_map", "ride_requests", "disruptions"),
    upstream_marks=("city_map", "ride_requests"),
    heuristics=(GREEDY,), multiagent=True, disruptions=True, docs="docs/ridesharing.md", tests="tests/ridesharing",
)

SPECS = (P3, P4)
