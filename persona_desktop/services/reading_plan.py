"""What the sleep cycle reads next, and how much imported history is still unread.

Phase 1 reads unread fragments newest first: the new material of the period, then
older history (an import), within `sleep.max_documents` documents per run, until
nothing is left. A fragment is marked read by the run that read it, in the same
transaction as what the model proposed for it; a document whose extraction failed
stays unread and comes back next run. Nothing is ever passed over, and a big store
costs nothing here: both walks use partial indexes over the unread fragments only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.dates import day_bounds, minus_days
from persona_desktop.domain.documents import plan_documents
from persona_desktop.ports import UnitOfWork, UnitOfWorkFactory

PAGE = 500
NEVER_READ = 0
"""The `run` that read a fragment the model must never read (a text sent over MCP): no run."""
HISTORY_TOTAL = "sleep.history_total"
HISTORY_LEFT = "sleep.history_left"


def plan_batch(uow: UnitOfWork, max_documents: int) -> list[list[int]]:
    """Fragment ids of the next `max_documents` documents, newest first.

    A document is one source session's unread fragments of one UTC day, cut like
    `plan_documents`; a day with more documents than the budget gives its newest ones.
    """
    plans: list[list[int]] = []
    seen: set[tuple[int, str, object]] = set()
    before: tuple[datetime, int] | None = None
    while len(plans) < max_documents:
        page = uow.fragments.unread_page(before, PAGE)
        if not page:
            break
        for head in page:
            group = (head.source_id, head.session, head.captured_at.date())
            if group in seen:
                continue
            seen.add(group)
            start, end = day_bounds(head.captured_at.date())
            members = uow.fragments.unread_in_group(head.source_id, head.session, start, end)
            for chunk in reversed(plan_documents(members)):
                plans.append(chunk)
                if len(plans) >= max_documents:
                    return plans
        before = (page[-1].captured_at, page[-1].id)
    return plans


@dataclass(frozen=True, slots=True)
class Backlog:
    """Unread fragments: `recent` within the period, `history_left` older, of `history_total`."""

    recent: int
    history_left: int
    history_total: int

    def to_json(self) -> dict[str, int | str]:
        return {"left": self.history_left, "total": self.history_total, "summary": self.summary()}

    def summary(self) -> str:
        if not self.history_left:
            return "History: nothing older left to read."
        return (
            f"History: {self.history_left:,} of {self.history_total:,} older messages and captures "
            "left to read (newest first, a few documents each night)."
        )


def backlog(uow: UnitOfWork, now: datetime, period_days: int) -> Backlog:
    """The backlog as of now; the total grows when new history arrives and resets once it is read."""
    recent, left = uow.fragments.unread_counts(minus_days(now, period_days))
    total = _int(uow.kv.get(HISTORY_TOTAL))
    seen_left = _int(uow.kv.get(HISTORY_LEFT))
    total = 0 if left == 0 else max(left, total + max(0, left - seen_left))
    return Backlog(recent, left, total)


def record_backlog(uow: UnitOfWork, state: Backlog) -> None:
    uow.kv.set(HISTORY_TOTAL, str(state.history_total))
    uow.kv.set(HISTORY_LEFT, str(state.history_left))


def _int(text: str | None) -> int:
    return int(text) if text is not None and text.isdigit() and len(text) < 19 else 0


def history_backlog(uow_factory: UnitOfWorkFactory, now: datetime, period_days: int) -> Backlog:
    """The backlog for the tray's tooltip (one read transaction; partial indexes make it cheap)."""
    with uow_factory.read() as uow:
        return backlog(uow, now, period_days)
