"""Where the parts of REALM P3 and P4 (urban ride-sharing, without and with disruptions) live."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

GREEDY = NamedHeuristic("ridesharing_greedy", "heuristics:greedy_action",
                        "each free vehicle to the legal stop it can serve soonest", style="action")

#: The instance fields that hold names (renamed by ``obfuscate=True``), the same in both problems.
NAME_FIELDS = ("locations[]", "requests[].passenger_id", "vehicles[].vehicle_id")

P3_SPLITS = Splits(
    dev=numbered("p3", small=(1, 4, 7), medium=(1, 4, 7), large=(1, 4)),
    test=numbered("p3", small=(2, 3, 5, 6, 8), medium=(2, 3, 5, 6), large=(2, 3, 5)),
    quick=numbered("p3", small=(1, 4), medium=(1,)),
    description=("p3_<size>_<k> is generate_p3(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P3 = ProblemSpec(
    problem="P3", title="urban ride-sharing", package=__package__,
    env="env:RideSharingEnv", names="formats:shipped_p3_names", load="formats:load_p3",
    generate="generator:generate_p3", check="checker:check", reference="references:p3_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p3", upstream_keys=("city_map", "ride_requests"),
    upstream_marks=("city_map", "ride_requests"),
    heuristics=(GREEDY,), multiagent=True, splits=P3_SPLITS, docs="docs/ridesharing.md", tests="tests/ridesharing",
    name_fields=NAME_FIELDS,
)

P4_SPLITS = Splits(
    dev=numbered("p4", small=(1, 4, 7), medium=(1, 4, 7), large=(1, 4)),
    test=numbered("p4", small=(2, 3, 5, 6, 8), medium=(2, 3, 5, 6), large=(2, 3, 5)),
    quick=numbered("p4", small=(1, 4), medium=(1,)),
    description=("p4_<size>_<k> is generate_p4(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P4 = ProblemSpec(
    problem="P4", title="ride-sharing with disruptions", package=__package__,
    env="env_disruptions:RideSharingDisruptionEnv", names="formats:shipped_p4_names", load="formats:load_p4",
    generate="generator:generate_p4", check="checker:check", reference="references:p4_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p4", upstream_keys=("city_map", "ride_requests", "disruptions"),
    upstream_marks=("city_map", "ride_requests"),
    heuristics=(GREEDY,), multiagent=True, disruptions=True, splits=P4_SPLITS, docs="docs/ridesharing.md", tests="tests/ridesharing",
    name_fields=NAME_FIELDS,
    kept_names=("accident", "local_traffic_congestion", "road_closure", "vehicle_breakdown"),
)

SPECS = (P3, P4)
