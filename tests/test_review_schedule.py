"""The turn review's schedule, which the chat window and the terminal chat both drive."""

from __future__ import annotations

from persona_desktop.services.review_schedule import DueReview, ReviewSchedule
from persona_desktop.services.review_setup import ReviewConfig, ReviewKind


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


ON = ReviewConfig(enabled=True, memory_interval=2, timeout_s=30.0)


def test_a_review_is_due_every_interval_and_at_once_when_the_owner_asks_to_remember() -> None:
    schedule = ReviewSchedule(ON)
    assert schedule.owner_turn("hi") is None
    assert schedule.owner_turn("how are you") == DueReview(ReviewKind.MEMORY, start=True)
    assert schedule.owner_turn("remember that I am vegetarian") == DueReview(ReviewKind.MEMORY, True)
    assert schedule.owner_turn("ok") is None


def test_with_the_review_off_turns_are_not_counted() -> None:
    schedule = ReviewSchedule(ReviewConfig(enabled=False, memory_interval=2))
    assert [schedule.owner_turn(t) for t in ("a", "b", "c")] == [None, None, None]
    # turned on in the settings: counting starts now, not with the turns before
    assert schedule.owner_turn("d", ON) is None
    assert schedule.owner_turn("e") == DueReview(ReviewKind.MEMORY, True)


def test_a_review_due_while_one_runs_is_skipped_and_counted_until_it_ends() -> None:
    schedule = ReviewSchedule(ReviewConfig(enabled=True, memory_interval=1))
    first = schedule.owner_turn("one")
    assert first is not None and first.start
    schedule.started()
    assert schedule.running
    assert schedule.owner_turn("two") == DueReview(ReviewKind.MEMORY, start=False)
    assert schedule.owner_turn("three") == DueReview(ReviewKind.MEMORY, start=False)
    assert schedule.skipped == 2
    schedule.ended()
    assert not schedule.running
    assert schedule.owner_turn("four") == DueReview(ReviewKind.MEMORY, start=True)


def test_a_running_review_is_overdue_after_the_timeout() -> None:
    clock = Clock()
    schedule = ReviewSchedule(ON, monotonic=clock)
    assert schedule.left() == 0.0 and not schedule.overdue()  # nothing runs
    assert schedule.started() == 30.0
    clock.now += 29.5
    assert schedule.left() == 0.5 and not schedule.overdue()
    clock.now += 0.5
    assert schedule.overdue() and schedule.left() == 0.0
    schedule.ended()
    assert not schedule.overdue()


def test_the_timeout_is_the_one_in_the_settings_when_the_review_starts() -> None:
    clock = Clock()
    schedule = ReviewSchedule(ON, monotonic=clock)
    schedule.owner_turn("a", ReviewConfig(enabled=True, memory_interval=1, timeout_s=5.0))
    assert schedule.started() == 5.0
    clock.now += 5.0
    assert schedule.overdue()


def test_a_failing_review_is_told_once_until_one_succeeds() -> None:
    schedule = ReviewSchedule(ON)
    assert [schedule.failed() for _ in range(3)] == [True, False, False]
    schedule.succeeded()
    assert schedule.failed()


def test_a_new_conversation_starts_the_counters_over() -> None:
    schedule = ReviewSchedule(ON)
    assert schedule.owner_turn("a") is None
    schedule.new_conversation()
    assert schedule.owner_turn("b") is None  # one turn of the new conversation, not the second
    assert schedule.owner_turn("c") == DueReview(ReviewKind.MEMORY, True)


def test_skill_and_memory_reviews_falling_due_together_are_one_combined_review() -> None:
    cfg = ReviewConfig(
        enabled=True, memory_interval=2, skill_interval=2, allowed_toolsets=("memory", "skills")
    )
    schedule = ReviewSchedule(cfg)
    assert schedule.owner_turn("a") is None
    assert schedule.owner_turn("b") == DueReview(ReviewKind.COMBINED, True)
