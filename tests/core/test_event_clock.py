"""The event clock the step-wise REALM envs share: it jumps to the next event, never back."""

from crab_gym.envs.realm.common.event_clock import EventClock


def test_advance_jumps_to_next_event_and_returns_everything_due_then_in_order():
    clock = EventClock(now=600)
    clock.schedule(700, "b")
    clock.schedule(650, "a")
    clock.schedule(700, "c")
    assert clock.next_time() == 650
    assert clock.advance() == ["a"] and clock.now == 650
    assert clock.advance() == ["b", "c"] and clock.now == 700
    assert clock.advance() == [] and clock.now == 700
    assert clock.advance(until=800) == [] and clock.now == 800


def test_until_caps_the_jump_and_past_events_are_due_now():
    clock = EventClock(now=100)
    clock.schedule(500, "late")
    assert clock.advance(until=300) == [] and clock.now == 300
    clock.schedule(50, "past")
    assert clock.next_time() == 300
    assert clock.due() == ["past"]
    assert clock.pending() == [(500, "late")]


def test_copy_is_independent():
    clock = EventClock(now=0)
    clock.schedule(10, "x")
    other = clock.copy()
    other.advance()
    assert clock.now == 0 and clock.pending() == [(10, "x")]
    assert other.now == 10 and other.pending() == []
