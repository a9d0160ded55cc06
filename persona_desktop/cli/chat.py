"""`chat`: the assistant in the terminal, one owner message per stdin line, reviews alongside.

When a turn review is due is `ReviewSchedule`'s decision, the same one the chat window
drives: here a review runs on one background thread, its outcome is collected after the
next turn (or at the end, waiting until it is overdue, then cancelling it).
"""

from __future__ import annotations

import argparse
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from persona_desktop.cli.review import print_review, review_runner
from persona_desktop.cli.runtime import export_after, runtime
from persona_desktop.errors import PersonaError

if TYPE_CHECKING:
    from persona_desktop.bootstrap import Runtime
    from persona_desktop.services.chat import ChatSession, TurnOutcome
    from persona_desktop.services.review_schedule import ReviewSchedule
    from persona_desktop.services.turn_review import ReviewKind, ReviewOutcome, Snapshot


def cmd_chat(args: argparse.Namespace) -> int:
    """A terminal chat: one owner message per stdin line, until EOF or /quit; reviews run alongside."""
    from persona_desktop.service_configs import recall_config, review_config
    from persona_desktop.services.chat import ChatSession, drain_turn
    from persona_desktop.services.review_schedule import ReviewSchedule

    with runtime(args) as rt:
        values = rt.settings.values
        session = ChatSession(
            rt.uow,
            rt.llm,
            rt.clock,
            include_observations=values.chat.include_observations,
            recall=recall_config(values),
            embedder=rt.embedder,
        )
        reviews = _Reviews(rt, ReviewSchedule(review_config(values)))
        try:
            for line in iter(sys.stdin.readline, ""):
                text = line.strip()
                if text in ("/quit", "/exit"):
                    break
                if not text:
                    continue
                outcome = drain_turn(session.ask(text), _show)
                sys.stdout.write("\n")
                sys.stdout.flush()
                if outcome.error:
                    print(
                        f"persona-desktop: the assistant could not answer: {outcome.error}", file=sys.stderr
                    )
                _print_memories(outcome)
                reviews.after_turn(text, session)
            reviews.finish()
        finally:
            reviews.close()
    return 0


def _show(piece: str) -> None:
    sys.stdout.write(piece)
    sys.stdout.flush()


class _Reviews:
    """The terminal's driver of the review schedule: one review at a time on a background thread."""

    def __init__(self, rt: Runtime, schedule: ReviewSchedule) -> None:
        self.rt = rt
        self.schedule = schedule
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="turn-review")
        self.running: Future[ReviewOutcome] | None = None
        self.cancel = threading.Event()

    def after_turn(self, text: str, session: ChatSession) -> None:
        from persona_desktop.services.turn_review import make_snapshot

        if self.running is not None and self.running.done():
            self._collect(self.running)
        due = self.schedule.owner_turn(text)
        if due is None:
            return
        if not due.start:
            print("persona-desktop: a review is still running; this one is skipped", file=sys.stderr)
            return
        snap = make_snapshot(session.id, session.system_prompt(), session.conversation.messages)
        self.cancel = threading.Event()
        self.running = self.pool.submit(self._review, due.kind, snap, self.cancel)
        self.schedule.started()

    def finish(self) -> None:
        """At the end of the chat: wait for a running review until it is overdue, then cancel it."""
        if self.running is not None:
            wait([self.running], timeout=self.schedule.left())
            self.cancel.set()
            self._collect(self.running)

    def close(self) -> None:
        self.cancel.set()
        self.pool.shutdown(wait=True)

    def _review(self, kind: ReviewKind, snapshot: Snapshot, cancel: threading.Event) -> ReviewOutcome:
        outcome = review_runner(self.rt).run(snapshot, kind, cancel.is_set)
        if outcome.applied:
            export_after(self.rt)
        return outcome

    def _collect(self, fut: Future[ReviewOutcome]) -> None:
        """Tell the owner how the review went; a failing review is told once, until one succeeds."""
        self.running = None
        self.schedule.ended()
        outcome: ReviewOutcome | None
        error: str | None
        try:
            outcome = fut.result()
        except PersonaError as exc:
            outcome, error = None, str(exc)
        else:
            error = outcome.error
        if not error:
            self.schedule.succeeded()
        elif not self.schedule.failed():
            return
        if outcome is None:
            print(f"persona-desktop: review failed: {error}", file=sys.stderr)
            return
        print_review(outcome)
        if outcome.summary():
            print(outcome.summary(), file=sys.stderr)


def _print_memories(outcome: TurnOutcome) -> None:
    """Which remembered facts the turn's prompt carried as relevant (stderr: stdout is the reply)."""
    used = outcome.memories
    if used:
        ids = ", ".join(f"#{r.fact.id}" for r in used)
        noun = "memory" if len(used) == 1 else "memories"
        print(f"(used {len(used)} {noun}: {ids}; `persona-desktop facts why ID` tells why)", file=sys.stderr)
