"""The per-turn background review of the live chat (Hermes-style, but it only proposes).

The review runs on a snapshot of the conversation with the chat's model and system
prompt, through tool calling, for at most `review.max_iterations` rounds and
`review.timeout_seconds` (when and with which tools: `review_setup`). Its tools only
propose: each proposal becomes a candidate (origin "review") in the same pending
queue as the sleep cycle's, with the conversation's messages as evidence, and the
same deterministic policy decides. A forget, a fact update and a skill never apply
by themselves. Any tool outside the allowed tool sets is refused, told to the model
and journaled.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from persona_desktop.domain.model import Author, Candidate, CandidateStatus, FactStatus, Subject
from persona_desktop.domain.policy import Verdict
from persona_desktop.domain.scoring import score, signals_for
from persona_desktop.domain.text import statement_key
from persona_desktop.errors import LLMError, StateError
from persona_desktop.ports import ChatModel, Clock, UnitOfWork, UnitOfWorkFactory
from persona_desktop.services.chat import ChatMessage
from persona_desktop.services.review_setup import (
    TOOL_NOUNS,
    TOOLSETS,
    ReviewConfig,
    ReviewKind,
    TurnCounter,
    asks_to_remember,
    default_kind,
    load_prompt,
    tool_schema,
)
from persona_desktop.services.select import evidence_stats, select_candidate
from persona_desktop.services.skills import check_proposal, skill_name
from persona_desktop.services.sleep_cycle import SleepConfig

__all__ = [
    "ReviewConfig",
    "ReviewKind",
    "ReviewOutcome",
    "Snapshot",
    "TurnCounter",
    "TurnReview",
    "asks_to_remember",
    "default_kind",
    "load_prompt",
    "make_snapshot",
]

MAX_SNAPSHOT = 60
MAX_STATEMENT = 500


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the reviewer sees: the conversation as it was when the review was due."""

    conversation_id: str
    system_prompt: str
    messages: tuple[ChatMessage, ...]

    def model_messages(self, review_prompt: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt}]
        for m in self.messages:
            out.append({"role": "user" if m.role == "owner" else "assistant", "content": m.text})
        listing = "\n".join(f"[{m.ref}] {m.role}: {m.text}" for m in self.messages)
        out.append(
            {
                "role": "user",
                "content": f"{review_prompt.strip()}\n\nMessages of this conversation:\n{listing}",
            }
        )
        return out


def make_snapshot(conversation_id: str, system_prompt: str, messages: Sequence[ChatMessage]) -> Snapshot:
    return Snapshot(conversation_id, system_prompt, tuple(messages[-MAX_SNAPSHOT:]))


@dataclass
class ReviewOutcome:
    kind: ReviewKind
    status: str = "done"  # done | stopped (max iterations) | timeout | cancelled | failed
    iterations: int = 0
    proposed: Counter[str] = field(default_factory=Counter)
    applied: int = 0
    dropped: int = 0
    refused: list[str] = field(default_factory=list)
    candidate_ids: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> str:
        """ "Memory review: 1 fact proposed, 1 skill patch proposed", or "" when nothing was proposed."""
        parts = []
        for tool, (one, many) in TOOL_NOUNS.items():
            n = self.proposed.get(tool, 0)
            if n:
                parts.append(f"{n} {one if n == 1 else many} proposed")
        if self.applied:
            parts.append(f"{self.applied} applied by the policy")
        if not parts:
            return ""
        title = {ReviewKind.MEMORY: "Memory review", ReviewKind.SKILL: "Skill review"}.get(
            self.kind, "Review"
        )
        return f"{title}: {', '.join(parts)}"

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "status": self.status,
            "iterations": self.iterations,
            "proposed": dict(self.proposed),
            "applied": self.applied,
            "dropped": self.dropped,
            "refused": self.refused,
            "candidate_ids": self.candidate_ids,
            "warnings": self.warnings,
            "error": self.error,
            "summary": self.summary(),
        }


class _Refused(Exception):
    """A tool call that cannot become a proposal; its message goes back to the model."""


class TurnReview:
    """Runs one review. Safe to run on a worker thread: every write is its own transaction."""

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        llm: ChatModel,
        clock: Clock,
        config: ReviewConfig,
        sleep: SleepConfig,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._uow = uow_factory
        self._llm = llm
        self._clock = clock
        self.config = config
        self._sleep = sleep
        self._monotonic = monotonic

    def run(
        self, snapshot: Snapshot, kind: ReviewKind, cancel: Callable[[], bool] = lambda: False
    ) -> ReviewOutcome:
        outcome = ReviewOutcome(kind)
        prompt, warning = load_prompt(kind, self.config)
        if warning:
            outcome.warnings.append(warning)
        unknown = [t for t in self.config.allowed_toolsets if t not in TOOLSETS]
        if unknown:
            outcome.warnings.append(
                f"review.allowed_toolsets: unknown tool set(s) {', '.join(unknown)} ignored; known: memory, skills"
            )
        allowed = self.config.allowed_tools(kind)
        self._journal(
            "review.started", snapshot, {"kind": kind.value, "tools": allowed, "warnings": outcome.warnings}
        )
        deadline = self._monotonic() + self.config.timeout_s
        messages = snapshot.model_messages(prompt)
        tools = [tool_schema(t) for t in allowed]
        by_ref = {m.ref: m for m in snapshot.messages}
        try:
            while True:
                if cancel():
                    outcome.status = "cancelled"
                    break
                if self._monotonic() > deadline:
                    outcome.status = "timeout"
                    break
                if outcome.iterations >= self.config.max_iterations:
                    outcome.status = "stopped"
                    break
                reply = self._llm.chat_tools(messages, tools)
                outcome.iterations += 1
                calls = list(reply.get("tool_calls") or [])
                if not calls:
                    break
                messages.append(
                    {
                        "role": "assistant",
                        "content": str(reply.get("content") or ""),
                        "tool_calls": [
                            {"function": {"name": c.get("name"), "arguments": c.get("arguments") or {}}}
                            for c in calls
                        ],
                    }
                )
                for call in calls:
                    name = str(call.get("name") or "")
                    args = call.get("arguments")
                    result = self._handle(
                        snapshot, by_ref, name, args if isinstance(args, dict) else {}, allowed, outcome
                    )
                    messages.append({"role": "tool", "tool_name": name, "content": result})
        except LLMError as exc:
            outcome.status, outcome.error = "failed", str(exc)
        self._journal("review.finished", snapshot, outcome.as_json())
        return outcome

    # --- tool calls ---------------------------------------------------------------------

    def _handle(
        self,
        snapshot: Snapshot,
        by_ref: dict[str, ChatMessage],
        name: str,
        args: dict[str, Any],
        allowed: list[str],
        outcome: ReviewOutcome,
    ) -> str:
        if name not in allowed:
            outcome.refused.append(name)
            self._journal(
                "review.tool_refused",
                snapshot,
                {"tool": name, "arguments": _clip(args), "allowed": allowed},
            )
            return (
                f"Refused: the tool {name!r} is not available to this review. You may only call: "
                f"{', '.join(allowed) or 'no tools'}. Nothing was changed."
            )
        try:
            with self._uow() as uow:
                text, verdict, candidate_id = self._propose(uow, snapshot, by_ref, name, args)
                uow.commit()
        except (_Refused, StateError) as exc:
            self._journal(
                "review.proposal_refused",
                snapshot,
                {"tool": name, "arguments": _clip(args), "reason": str(exc)},
            )
            return f"Not proposed: {exc}"
        if verdict is Verdict.DROP:
            outcome.dropped += 1
        elif candidate_id not in outcome.candidate_ids:  # the same proposal again is not news
            outcome.proposed[name] += 1
            outcome.candidate_ids.append(candidate_id)
            if verdict is Verdict.APPLY:
                outcome.applied += 1
        return text

    def _propose(
        self,
        uow: UnitOfWork,
        snapshot: Snapshot,
        by_ref: dict[str, ChatMessage],
        name: str,
        args: dict[str, Any],
    ) -> tuple[str, Verdict, int]:
        refs = args.get("refs")
        cited = [str(r) for r in refs] if isinstance(refs, list) else []
        unknown = [r for r in cited if r not in by_ref]
        owner_refs = [r for r in cited if r in by_ref and by_ref[r].role == "owner"]
        uncited = not owner_refs
        if uncited:  # nothing usable cited: the owner's messages of the snapshot (never auto-applied)
            owner_refs = [m.ref for m in snapshot.messages if m.role == "owner"]
        fragments = uow.fragments.by_refs(owner_refs)
        evidence = [f for f in fragments.values() if f.author is Author.OWNER]
        if not evidence:
            raise _Refused("no message of the owner in this conversation supports it")
        payload: dict[str, Any] = {
            "conversation": snapshot.conversation_id,
            "tool": name,
            "cited_refs": cited,
            "evidence": "snapshot" if uncited else "cited",
        }
        subject = Subject.OWNER
        category: str | None = _text(args.get("category"), 40) or None
        supersedes: int | None = None
        if name in ("propose_fact", "propose_fact_update"):
            statement = _text(args.get("statement"), MAX_STATEMENT)
            if not statement:
                raise _Refused("a fact needs a statement")
            key = statement_key(statement)
            if name == "propose_fact":
                raw_subject = str(args.get("subject") or "owner").strip().lower()
                subject = (
                    Subject(raw_subject) if raw_subject in Subject._value2member_map_ else Subject.UNKNOWN
                )
                payload["action"] = "add"
            else:
                target = self._applied_fact(uow, args.get("fact_id"))
                subject, category = target.subject, category or target.category
                payload.update(action="update", fact_id=target.id, updates_fact=target.id)
                supersedes = target.id
        elif name == "propose_forget":
            target = self._applied_fact(uow, args.get("fact_id"))
            reason = _text(args.get("reason"), MAX_STATEMENT) or "no reason given"
            statement = f"Forget: {target.statement}"
            key = f"forget:{target.id}"
            subject, category = target.subject, target.category
            payload.update(action="forget", fact_id=target.id, reason=reason)
        else:
            skill = skill_name(args.get("name"))
            if name == "propose_skill":
                content = _text(args.get("content"), 20_000, keep_lines=True)
                payload.update(kind="skill", action="create", name=skill, content=content)
                statement = f"New skill {skill}: {_condensed(content)}"
            else:
                old, new = str(args.get("old_text") or ""), str(args.get("new_text") or "")
                payload.update(kind="skill", action="patch", name=skill, old=old, new=new)
                statement = f"Patch skill {skill}: replace \u201c{_condensed(old)}\u201d with \u201c{_condensed(new)}\u201d"
            check_proposal(uow, payload)
            digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
            key, category = f"skill:{skill}:{digest}", "skill"
        return self._land(
            uow, snapshot, statement, subject, key, category, payload, supersedes, evidence, unknown
        )

    def _applied_fact(self, uow: UnitOfWork, raw: object) -> Any:
        try:
            fact_id = int(str(raw))
        except ValueError:
            raise _Refused(f"{raw!r} is not a fact number") from None
        fact = uow.facts.get(fact_id)
        if fact is None or fact.status is not FactStatus.APPLIED:
            raise _Refused(f"fact {fact_id} is not a current fact")
        return fact

    def _land(
        self,
        uow: UnitOfWork,
        snapshot: Snapshot,
        statement: str,
        subject: Subject,
        key: str,
        category: str | None,
        payload: dict[str, Any],
        supersedes: int | None,
        evidence: list[Any],
        unknown: list[str],
    ) -> tuple[str, Verdict, int]:
        now = self._clock.now()
        existing = uow.candidates.open_by_key(key, subject)
        if existing is None:
            candidate_id = uow.candidates.add(
                statement=statement,
                subject=subject,
                key=key,
                category=category,
                origin="review",
                run_id=None,
                payload=payload,
                supersedes_fact_id=supersedes,
                created_at=now,
            )
        else:
            candidate_id = existing.id
            uow.candidates.mark_unscored(candidate_id)
        uow.candidates.add_evidence(candidate_id, [f.id for f in evidence], None)
        if unknown:
            uow.candidates.note_rejected_refs(candidate_id, len(unknown))
        uow.journal.append(
            at=now,
            actor="review",
            action="candidate.proposed" if existing is None else "candidate.seen_again",
            entity="candidate",
            entity_id=candidate_id,
            data={
                "statement": statement,
                "subject": subject.value,
                "conversation": snapshot.conversation_id,
                "tool": payload["tool"],
                "refs": payload["cited_refs"],
                "evidence_refs": [f.ref for f in evidence],
                "rejected_refs": unknown,
            },
        )
        candidate = uow.candidates.get(candidate_id)
        assert candidate is not None
        if (
            payload.get("action") == "forget"
            or payload.get("kind") == "skill"
            or payload.get("evidence") == "snapshot"
        ):
            verdict, reason = Verdict.PENDING, self._hold(uow, candidate, now)
        else:
            cfg = self._sleep
            applied = uow.facts.all(FactStatus.APPLIED)
            verdict = select_candidate(
                uow,
                candidate,
                now=now,
                period_days=cfg.period_days,
                weights=cfg.weights,
                threshold=cfg.threshold,
                review_floor=cfg.review_floor,
                applied=applied,
                run_id=None,
            )
            decided = uow.candidates.get(candidate_id)
            reason = decided.reason if decided is not None and decided.reason else verdict.value
            if verdict is Verdict.APPLY and payload.get("action") == "update":  # the policy never may
                raise AssertionError("a fact update was applied without the owner")
        said = {
            Verdict.APPLY: f"applied by the policy as a proven owner fact (candidate {candidate_id})",
            Verdict.PENDING: f"waiting for the owner's review as candidate {candidate_id} ({reason})",
            Verdict.DROP: f"dropped by the policy ({reason})",
        }[verdict]
        return f"Proposed: {said}.", verdict, candidate_id

    def _hold(self, uow: UnitOfWork, candidate: Candidate, now: Any) -> str:
        """Score like the policy does, but keep it pending: only the owner may forget or write skills."""
        cfg = self._sleep
        ev = uow.candidates.evidence(candidate.id)
        signals = signals_for(evidence_stats(candidate, ev, 0), now, cfg.period_days)
        if candidate.payload.get("kind") == "skill":
            reason = "a skill always waits for your approval"
        elif candidate.payload.get("action") == "forget":
            reason = "a forget always waits for your approval"
        else:  # the whole conversation stands in as evidence: it proves nothing by itself
            reason = "the review cited none of your messages; waits for your approval"
        uow.candidates.set_scored(
            candidate.id,
            status=CandidateStatus.PENDING,
            score=score(signals, cfg.weights),
            signals=signals,
            reason=reason,
            supersedes_fact_id=None,
        )
        uow.journal.append(
            at=now,
            actor="policy",
            action="candidate.pending",
            entity="candidate",
            entity_id=candidate.id,
            data={"statement": candidate.statement, "reason": reason, "evidence_refs": [f.ref for f in ev]},
        )
        return reason

    def _journal(self, action: str, snapshot: Snapshot, data: dict[str, Any]) -> None:
        with self._uow() as uow:
            uow.journal.append(
                at=self._clock.now(),
                actor="review",
                action=action,
                entity="conversation",
                data={"conversation": snapshot.conversation_id, **data},
            )
            uow.commit()


def _text(raw: object, limit: int, keep_lines: bool = False) -> str:
    text = str(raw or "")
    text = text.strip() if keep_lines else " ".join(text.split())
    return text[:limit]


def _condensed(text: str, limit: int = 400) -> str:
    """A skill's Markdown on one line, so the review table shows what would be written."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    one = " / ".join(lines)
    return one if len(one) <= limit else one[: limit - 1] + "\u2026"


def _clip(args: dict[str, Any]) -> dict[str, Any]:
    return {k: (v[:200] if isinstance(v, str) else v) for k, v in list(args.items())[:10]}
