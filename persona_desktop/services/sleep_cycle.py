"""The sleep cycle (DESIGN.md): gate, collect, generalize, select and apply.

Written as a Qt-free generator of `Progress` events that checks a cancel flag,
so the tray can run it in a QThread and the CLI can simply drain it. Every step
is its own short transaction and LLM calls happen outside transactions, so a
run killed at any point leaves the store consistent and the next run finishes
the work: a document's fragments are marked read in the same transaction as
what the model proposed for them, and a document whose extraction failed stays
unread (reading_plan.py).

Every write of a run first checks, in its own transaction, that this runner still
holds the lease: a runner that lost it (stalled past its expiry while another took
over) stops before its next write and never calls the model again.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from persona_desktop.domain.dates import as_utc, minus_days
from persona_desktop.domain.documents import Document
from persona_desktop.domain.extraction import (
    EXTRACTION_SCHEMA,
    GENERALIZATION_SCHEMA,
    parse_extraction,
    parse_generalization,
)
from persona_desktop.domain.model import CandidateStatus, FactStatus, RunStatus
from persona_desktop.domain.policy import Limits, Verdict
from persona_desktop.errors import LeaseLostError, LLMError, StoreError, TransientLLMError
from persona_desktop.ports import LLM, Clock, UnitOfWork, UnitOfWorkFactory
from persona_desktop.services.collect import store_extraction
from persona_desktop.services.llm_calls import Cancelled, call_with_retries
from persona_desktop.services.prompts import extraction_messages, generalization_messages
from persona_desktop.services.reading_plan import NEVER_READ, Backlog, backlog, plan_batch, record_backlog
from persona_desktop.services.select import ApplyCounter, SelectConfig, select_candidate

LEASE = "sleep"
MAX_DOCUMENT_FAILURES = 3
LEASE_MARGIN_S = 60.0
MAX_PERIOD_STATEMENTS = 80


@dataclass(frozen=True, slots=True)
class SleepConfig:
    enabled: bool = False
    quiet_minutes: int = 60
    period_days: int = 7
    max_documents: int = 24
    threshold: float = 0.6
    review_floor: float = 0.3
    weights: dict[str, float] = field(default_factory=dict)
    lease_seconds: int = 900
    retries: int = 2
    backoff_s: float = 1.0
    llm_timeout_s: float = 120.0
    auto_apply_per_document: int = 3
    auto_apply_per_run: int = 10

    @property
    def lease_ttl_s(self) -> float:
        """A lease renewed before an LLM call outlasts the call's whole deadline."""
        return max(float(self.lease_seconds), self.llm_timeout_s + LEASE_MARGIN_S)

    def selection(self) -> SelectConfig:
        """What the policy decides with: the same for the cycle and the turn review."""
        return SelectConfig(
            period_days=self.period_days,
            weights=self.weights,
            limits=Limits(
                threshold=self.threshold,
                review_floor=self.review_floor,
                per_document=self.auto_apply_per_document,
                per_run=self.auto_apply_per_run,
            ),
        )


@dataclass(frozen=True, slots=True)
class Progress:
    phase: str
    done: int
    total: int
    message: str


@dataclass(frozen=True, slots=True)
class RunOutcome:
    status: RunStatus
    run_id: int | None
    counters: dict[str, Any]
    error: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "run_id": self.run_id,
            **self.counters,
            "error": self.error,
            "message": self.message,
        }


def default_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def summary(counters: dict[str, Any]) -> str:
    applied, pending = counters.get("applied", 0), counters.get("pending_total", counters.get("pending", 0))
    text = f"Memory: {applied} fact{'s' if applied != 1 else ''} added, {pending} waiting for your review"
    history = counters.get("history")
    if isinstance(history, dict) and history.get("left"):
        text += f". {history.get('summary', '')}".rstrip()
    return text


class SleepCycle:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        llm_factory: Callable[[], LLM],
        config: SleepConfig,
        clock: Clock,
        holder: str | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._uow = uow_factory
        self._llm_factory = llm_factory
        self._cfg = config
        self._clock = clock
        self.holder = holder or default_holder()
        self._sleep = sleep

    # --- the gate ---------------------------------------------------------------------

    def gate(self, skip_quiet: bool = False) -> RunOutcome | None:
        """None when the cycle may run; else the outcome that says why not.

        `skip_quiet`: the owner asked for this run ("run anyway"), so their being active
        does not defer it; the master switch still does, and the lease still applies."""
        if not self._cfg.enabled:
            return RunOutcome(
                RunStatus.DISABLED, None, {}, None, "The sleep cycle is off (sleep.enabled is false)."
            )
        if skip_quiet:
            return None
        now = self._clock.now()
        with self._uow.read() as uow:
            last = uow.fragments.last_owner_chat_at(until=now)
            active = uow.kv.get("owner.last_active_at")
        seen = _activity_time(active)
        if seen is not None and seen <= now and (last is None or seen > last):
            last = seen  # a time after now (a clock set back, a bad value) says nothing
        if (
            self._cfg.quiet_minutes > 0
            and last is not None
            and now - last < timedelta(minutes=self._cfg.quiet_minutes)
        ):
            minutes = max(0, int((now - last).total_seconds() // 60))
            return RunOutcome(
                RunStatus.DEFERRED,
                None,
                {"owner_active_minutes_ago": minutes},
                None,
                f"Deferred: you were active {minutes} min ago (quiet time is {self._cfg.quiet_minutes} min).",
            )
        return None

    # --- the run ----------------------------------------------------------------------

    def run(
        self, cancel: Callable[[], bool] = lambda: False, skip_quiet: bool = False
    ) -> Generator[Progress, None, RunOutcome]:
        blocked = self.gate(skip_quiet)
        if blocked is not None:
            return blocked
        now = self._clock.now()
        with self._uow() as uow:
            other = uow.leases.acquire(LEASE, self.holder, now, self._cfg.lease_ttl_s)
            uow.commit()
        if other is not None:
            return RunOutcome(
                RunStatus.SKIPPED,
                None,
                {"lease_holder": other},
                None,
                f"Skipped: {other} is running a cycle.",
            )
        self._run_id: int | None = None
        try:
            return (yield from self._run_leased(cancel))
        except LeaseLostError as lost:
            return RunOutcome(
                RunStatus.SKIPPED,
                self._run_id,
                {"lease_holder": lost.holder, "lease_lost": True},
                str(lost),
                f"Stopped: {lost}",
            )
        finally:
            try:
                with self._uow() as uow:
                    uow.leases.release(LEASE, self.holder)
                    uow.commit()
            except StoreError:
                pass  # the lease expires by itself; the run's own error is what the owner must see

    @contextmanager
    def _owned(self) -> Iterator[UnitOfWork]:
        """A write transaction, only while this runner still holds the lease (renewed here)."""
        with self._uow() as uow:
            if not uow.leases.renew(LEASE, self.holder, self._clock.now(), self._cfg.lease_ttl_s):
                other = uow.leases.holder(LEASE)
                raise LeaseLostError(other)
            yield uow

    def _renew(self) -> None:
        with self._owned() as uow:
            uow.commit()

    def _snapshot(self) -> list[Document]:
        """The documents of this run: unread fragments, newest first (reading_plan.py).

        Texts another assistant sent over MCP are never in a document: the model never
        reads them. Stored unread before this rule, they are set aside (marked read) here.
        """
        with self._uow.read() as uow:
            plans = plan_batch(uow, self._cfg.max_documents)
            loaded = {f.id: f for f in uow.fragments.by_ids([i for plan in plans for i in plan])}
        outside = [i for i, f in loaded.items() if f.from_outside]
        if outside:
            with self._owned() as uow:
                uow.fragments.mark_read(outside, NEVER_READ)
                uow.commit()
            loaded = {i: f for i, f in loaded.items() if not f.from_outside}
        order = lambda f: (f.captured_at, f.seq, f.id)  # noqa: E731
        return [
            Document(tuple(sorted((loaded[i] for i in plan if i in loaded), key=order)))
            for plan in plans
            if any(i in loaded for i in plan)
        ]

    def _snapshot_key(self, selected: list[Document]) -> str:
        h = hashlib.sha256()
        h.update(
            json.dumps(
                [
                    self._cfg.threshold,
                    self._cfg.review_floor,
                    sorted(self._cfg.weights.items()),
                    self._cfg.auto_apply_per_document,
                    self._cfg.auto_apply_per_run,
                ]
            ).encode()
        )
        for d in selected:
            h.update(d.digest().encode())
        return h.hexdigest()[:40]

    def _open_run(self, key: str) -> tuple[int, RunOutcome | None]:
        """Reuse a finished run of this snapshot, resume an interrupted one, or start anew."""
        now = self._clock.now()
        with self._owned() as uow:
            attempts = uow.runs.by_key_prefix(key)
            for stale in uow.runs.running():
                if stale.holder != self.holder and (not attempts or stale.id != attempts[-1].id):
                    uow.runs.finish(
                        stale.id, RunStatus.FAILED, now, stale.counters, "interrupted: its runner stopped"
                    )
            last = attempts[-1] if attempts else None
            if (
                last is not None
                and last.status is RunStatus.DONE
                and not last.counters.get("documents_failed")
            ):
                reused = RunOutcome(
                    RunStatus.DONE, last.id, {**last.counters, "reused": True}, None, summary(last.counters)
                )
                uow.commit()
                return last.id, reused
            if last is not None and last.status is RunStatus.RUNNING:
                uow.runs.set_holder(last.id, self.holder)
                run_id = last.id
                action = "run.resumed"
            else:
                run_key = key if last is None else f"{key}#{len(attempts) + 1}"
                run_id = uow.runs.create(run_key, self.holder, now)
                action = "run.started"
            uow.journal.append(
                at=now,
                actor="sleep",
                action=action,
                entity="run",
                entity_id=run_id,
                run_id=run_id,
                data={"holder": self.holder, "snapshot": key},
            )
            record_backlog(uow, backlog(uow, now, self._cfg.period_days))
            uow.commit()
        return run_id, None

    def _mark_read(self, doc: Document, run_id: int) -> int:
        with self._owned() as uow:
            marked = uow.fragments.mark_read([f.id for f in doc.fragments], run_id)
            uow.commit()
        return marked

    def _run_leased(self, cancel: Callable[[], bool]) -> Generator[Progress, None, RunOutcome]:
        selected = self._snapshot()
        key = self._snapshot_key(selected)
        run_id, reused = self._open_run(key)
        self._run_id = run_id
        if reused is not None:
            return reused
        counters: dict[str, Any] = {
            "documents": len(selected),
            "documents_done": 0,
            "documents_failed": 0,
            "documents_skipped": 0,
            "documents_abandoned": 0,
            "fragments_read": 0,
            "candidates": 0,
            "candidates_merged": 0,
            "refs_rejected": 0,
            "not_evidence": 0,
            "llm_calls": 0,
            "applied": 0,
            "pending": 0,
            "dropped": 0,
            "observation_id": None,
        }
        error: str | None = None
        status = RunStatus.DONE
        llm: LLM | None = None
        try:
            with self._uow.read() as uow:
                known = uow.facts.all(FactStatus.APPLIED)
            for index, doc in enumerate(selected):
                if cancel():
                    raise Cancelled
                yield Progress(
                    "collect", index, len(selected), f"Reading document {index + 1} of {len(selected)}"
                )
                self._renew()
                with self._uow.read() as uow:
                    done = uow.runs.document_done(doc.digest())
                if not doc.has_non_assistant or done:
                    counters["documents_skipped"] += 1
                    counters["fragments_read"] += self._mark_read(doc, run_id)
                    continue
                if llm is None:
                    llm = self._llm_factory()
                try:
                    counters["llm_calls"] += 1
                    content = self._call(
                        llm, extraction_messages(doc, known), EXTRACTION_SCHEMA, cancel, run_id
                    )
                except LLMError as exc:  # retries exhausted, or not worth retrying
                    error = str(exc)
                    status = RunStatus.FAILED
                    self._record_failure(doc, run_id, error)
                    break
                result = parse_extraction(content, doc.refs)
                if result.malformed:
                    failures = self._record_failure(doc, run_id, "; ".join(result.problems))
                    if failures >= MAX_DOCUMENT_FAILURES:
                        counters["documents_abandoned"] += 1
                        self._journal(
                            run_id,
                            "document.abandoned",
                            "document",
                            None,
                            {"document": doc.digest(), "failures": failures, "refs": sorted(doc.refs)[:20]},
                        )
                        counters["fragments_read"] += self._mark_read(doc, run_id)
                    else:
                        counters["documents_failed"] += 1  # stays unread: the next run tries again
                    continue
                now = self._clock.now()
                with self._owned() as uow:
                    c = store_extraction(uow, doc, result, run_id, now)
                    uow.runs.record_document(doc.digest(), run_id, True, now)
                    counters["fragments_read"] += uow.fragments.mark_read(
                        [f.id for f in doc.fragments], run_id
                    )
                    uow.commit()
                counters["documents_done"] += 1
                counters["candidates"] += c.proposed
                counters["candidates_merged"] += c.merged
                counters["refs_rejected"] += c.refs_rejected
                counters["not_evidence"] += c.not_evidence

            if status is RunStatus.DONE:
                yield Progress("generalize", 0, 1, "Looking for the themes of the period")
                if llm is None and self._needs_generalization(run_id):
                    llm = self._llm_factory()
                if llm is not None:
                    counters["observation_id"] = self._generalize(llm, run_id, cancel, counters)

            yield from self._select(run_id, counters, cancel)
        except Cancelled:
            status, error = RunStatus.CANCELLED, "cancelled"
        except (LeaseLostError, StoreError):
            raise  # no write is safe (another runner owns the run) or possible (full, damaged)
        except Exception as exc:  # a bug: record it on the run, then let it surface
            self._finish(run_id, RunStatus.FAILED, counters, f"internal error: {type(exc).__name__}")
            raise
        with self._uow.read() as uow:
            counters["pending_total"] = uow.candidates.count_status(CandidateStatus.PENDING)
        self._finish(run_id, status, counters, error)
        message = summary(counters) if status is RunStatus.DONE else f"Sleep cycle {status.value}: {error}"
        return RunOutcome(status, run_id, counters, error, message)

    # --- helpers ----------------------------------------------------------------------

    def _call(
        self,
        llm: LLM,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        cancel: Callable[[], bool],
        run_id: int,
    ) -> str:
        def on_retry(attempt: int, exc: TransientLLMError) -> None:
            self._journal(run_id, "llm.retry", "run", run_id, {"attempt": attempt, "error": str(exc)})

        kwargs: dict[str, Any] = {}
        if self._sleep is not None:
            kwargs["sleep"] = self._sleep
        return call_with_retries(
            llm,
            messages,
            schema,
            retries=self._cfg.retries,
            backoff_s=self._cfg.backoff_s,
            cancel=cancel,
            on_retry=on_retry,
            before_attempt=self._renew,  # no call is sent by a runner that lost its lease
            **kwargs,
        )

    def _journal(
        self, run_id: int | None, action: str, entity: str, entity_id: int | None, data: dict[str, Any]
    ) -> None:
        with self._owned() as uow:
            uow.journal.append(
                at=self._clock.now(),
                actor="sleep",
                action=action,
                entity=entity,
                entity_id=entity_id,
                run_id=run_id,
                data=data,
            )
            uow.commit()

    def _record_failure(self, doc: Document, run_id: int, error: str) -> int:
        now = self._clock.now()
        with self._owned() as uow:
            failures = uow.runs.record_document(doc.digest(), run_id, False, now)
            uow.journal.append(
                at=now,
                actor="sleep",
                action="extraction.failed",
                entity="document",
                run_id=run_id,
                data={"document": doc.digest(), "error": error, "failures": failures},
            )
            uow.commit()
        return failures

    def _period_statements(self) -> list[str]:
        since = minus_days(self._clock.now(), self._cfg.period_days)
        with self._uow.read() as uow:
            return uow.candidates.recent_statements(since, MAX_PERIOD_STATEMENTS)

    def _needs_generalization(self, run_id: int) -> bool:
        with self._uow.read() as uow:
            observed = uow.kv.get(f"run.{run_id}.observed")
        return observed is None and bool(self._period_statements())

    def _generalize(
        self, llm: LLM, run_id: int, cancel: Callable[[], bool], counters: dict[str, Any]
    ) -> int | None:
        with self._uow.read() as uow:
            observed = uow.kv.get(f"run.{run_id}.observed")
        if observed is not None:
            return int(observed) if observed.isdigit() else None
        statements = self._period_statements()
        if not statements:
            return None
        problems: list[str] = []
        try:
            counters["llm_calls"] += 1
            content = self._call(
                llm, generalization_messages(statements), GENERALIZATION_SCHEMA, cancel, run_id
            )
            parsed = parse_generalization(content, problems)
        except LLMError as exc:
            problems.append(str(exc))
            parsed = None
        now = self._clock.now()
        with self._owned() as uow:
            if parsed is None:
                uow.journal.append(
                    at=now,
                    actor="sleep",
                    action="observation.failed",
                    entity="observation",
                    run_id=run_id,
                    data={"problems": problems},
                )
                uow.kv.set(f"run.{run_id}.observed", "failed")
                uow.commit()
                return None
            obs_id = uow.observations.add(run_id, parsed.observation, parsed.themes, now)
            uow.journal.append(
                at=now,
                actor="sleep",
                action="observation.added",
                entity="observation",
                entity_id=obs_id,
                run_id=run_id,
                data={"observation": parsed.observation, "themes": parsed.themes},
            )
            uow.kv.set(f"run.{run_id}.observed", str(obs_id))
            uow.commit()
        return obs_id

    def _select(
        self, run_id: int, counters: dict[str, Any], cancel: Callable[[], bool]
    ) -> Generator[Progress, None, None]:
        with self._uow.read() as uow:
            todo = uow.candidates.unscored()
            applied = uow.facts.all(FactStatus.APPLIED)
            counter = ApplyCounter.of_run(uow, run_id)  # a resumed run keeps its caps
        config = self._cfg.selection()
        for index, candidate in enumerate(todo):
            if cancel():
                raise Cancelled
            if index % 25 == 0:
                yield Progress("select", index, len(todo), f"Scoring candidate {index + 1} of {len(todo)}")
            with self._owned() as uow:
                fresh = uow.candidates.get(candidate.id)
                if fresh is None or fresh.scored:
                    continue
                verdict = select_candidate(
                    uow,
                    fresh,
                    now=self._clock.now(),
                    config=config,
                    applied=applied,
                    counter=counter,
                    run_id=run_id,
                )
                uow.commit()
            counters[
                {Verdict.APPLY: "applied", Verdict.PENDING: "pending", Verdict.DROP: "dropped"}[verdict]
            ] += 1
        yield Progress("select", len(todo), len(todo), "Done")

    def _finish(self, run_id: int, status: RunStatus, counters: dict[str, Any], error: str | None) -> Backlog:
        """Record the run's end (and the history backlog it leaves) in one transaction."""
        now = self._clock.now()
        with self._owned() as uow:
            left = backlog(uow, now, self._cfg.period_days)
            record_backlog(uow, left)
            counters["history"] = left.to_json()
            uow.runs.finish(run_id, status, now, counters, error)
            uow.journal.append(
                at=now,
                actor="sleep",
                action="run.finished",
                entity="run",
                entity_id=run_id,
                run_id=run_id,
                data={"status": status.value, **counters, "error": error},
            )
            uow.commit()
        return left


def _activity_time(text: str | None) -> datetime | None:
    """`owner.last_active_at` as an aware UTC time; None when missing or not a time."""
    if not text:
        return None
    try:
        return as_utc(datetime.fromisoformat(text))
    except ValueError:
        return None


def drain(
    gen: Generator[Progress, None, RunOutcome], on_progress: Callable[[Progress], None] | None = None
) -> RunOutcome:
    """Run a cycle to its end (the CLI's way); returns its outcome."""
    while True:
        try:
            event = next(gen)
        except StopIteration as stop:
            outcome: RunOutcome = stop.value
            return outcome
        if on_progress is not None:
            on_progress(event)
