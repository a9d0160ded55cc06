"""When the live chat's turn review runs: one decision for the chat window and the terminal chat.

The counters (`TurnCounter`) say after which owner turn a review is due. At most one
review runs at a time: one that falls due while another still runs is skipped, and
counted. A running review is overdue once it outlives `review.timeout_seconds`, and its
driver then cancels it. A failing review is told to the owner once, until a review
succeeds again (the driver still logs each failure).

Qt-free: the chat window drives it from its worker's signals and holds the timeout in a
QTimer; the terminal chat drives it from its thread pool's futures.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from persona_desktop.services.review_setup import ReviewConfig, ReviewKind, TurnCounter


@dataclass(frozen=True, slots=True)
class DueReview:
    """A review the counters say is due after this turn."""

    kind: ReviewKind
    start: bool  # False: another review still runs, so this one is skipped


class ReviewSchedule:
    """The turn review's timing for one chat: due, running, overdue, skipped, failing."""

    def __init__(self, config: ReviewConfig, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._counter = TurnCounter(config)
        self._monotonic = monotonic
        self._deadline: float | None = None
        self._failure_told = False
        self.skipped = 0

    @property
    def running(self) -> bool:
        """A review was started and has not ended yet."""
        return self._deadline is not None

    def new_conversation(self, config: ReviewConfig | None = None) -> None:
        """Another conversation starts: the counters start over (a running review goes on)."""
        if config is not None:
            self.config = config
        self._counter = TurnCounter(self.config)

    def owner_turn(self, text: str, config: ReviewConfig | None = None) -> DueReview | None:
        """After the owner's turn `text`: the review that is due, if any.

        `config` is the review settings as they are now (the window reads them again on
        every turn, so a change in the settings dialog counts from the next turn). With the
        review off, turns are not counted."""
        if config is not None:
            self.config = self._counter.config = config
        if not self.config.enabled:
            return None
        kind = self._counter.owner_turn(text)
        if kind is None:
            return None
        if self.running:
            self.skipped += 1
            return DueReview(kind, start=False)
        return DueReview(kind, start=True)

    def started(self) -> float:
        """A review starts now; returns the seconds after which it is overdue."""
        self._deadline = self._monotonic() + self.config.timeout_s
        return self.config.timeout_s

    def left(self) -> float:
        """Seconds until the running review is overdue (0 when none runs or it already is)."""
        if self._deadline is None:
            return 0.0
        return max(0.0, self._deadline - self._monotonic())

    def overdue(self) -> bool:
        return self._deadline is not None and self._monotonic() >= self._deadline

    def succeeded(self) -> None:
        """The review ended without an error: the next failure is told again."""
        self._failure_told = False

    def failed(self) -> bool:
        """The review failed; True when the owner is to be told (the first failure since a success)."""
        if self._failure_told:
            return False
        self._failure_told = True
        return True

    def ended(self) -> None:
        """The review is over (done, failed or cancelled): the next one due may start."""
        self._deadline = None
