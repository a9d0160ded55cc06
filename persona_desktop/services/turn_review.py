"""The per-turn background review of the live chat (Hermes-style, but it only proposes).

The review runs on a snapshot of the conversation with the chat's model and system
prompt, through tool calling, for at most `review.max_iterations` rounds and
`review.timeout_seconds` (when and with which tools: `review_setup`). Its tools only
propose: each proposal becomes a candidate (origin "review") in the same pending
queue as the sleep cycle's, with the conversation's messages as evidence, and the
same deterministic policy decides (`select.select_candidate`), with the auto-apply
caps counted per review run. A forget, a fact update and a skill never apply by
themselves. Any tool outside the allowed tool sets is refused, told to the model
and journaled.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from persona_desktop.domain.finite import json_safe
from persona_desktop.domain.model import Author, Fact, FactStatus, Subject
from persona_desktop.domain.policy import Verdict
from persona_desktop.domain.proposals import (
    FactUpdate,
    Forget,
    NewFact,
    NewSkill,
    Proposal,
    SkillPatch,
    SkillProposal,
    Via,
)
from persona_desktop.errors import LLMError, StateError
from persona_desktop.ports import ChatModel, Clock, UnitOfWork, UnitOfWorkFactory
from persona_desktop.services.chat import ChatMessage
from persona_desktop.services.proposals import Proposed, land
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
from persona_desktop.services.select import ApplyCounter, select_candidate
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
MAX_REFS = 50


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the reviewer sees: the conversation as it was when the review was due."""

    conversation_id: str
    system_prompt: str
    messages: tuple[ChatMessage, ...]

    def model_messages(self, review_prompt: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt}]
        for m in self.messages:
            if m.role == "assistant":
                out.append({"role": "assistant", "content": m.text})
            else:  # someone else's words reach the model marked as such, never as the owner's
                text = m.text if m.role == "owner" else f"(written by someone else) {m.text}"
                out.append({"role": "user", "content": text})
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

    def to_json(self) -> dict[str, Any]:
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
        counter = ApplyCounter()  # the auto-apply caps count per review run
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
                            {
                                "function": {
                                    "name": c.get("name"),
                                    "arguments": json_safe(c.get("arguments") or {}),
                                }
                            }
                            for c in calls
                        ],
                    }
                )
                for call in calls:
                    name = str(call.get("name") or "")
                    args = call.get("arguments")
                    result = self._handle(
                        snapshot,
                        by_ref,
                        name,
                        args if isinstance(args, dict) else {},
                        allowed,
                        outcome,
                        counter,
                    )
                    messages.append({"role": "tool", "tool_name": name, "content": result})
        except LLMError as exc:
            outcome.status, outcome.error = "failed", str(exc)
        self._journal("review.finished", snapshot, outcome.to_json())
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
        counter: ApplyCounter,
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
                text, verdict, candidate_id = self._propose(uow, snapshot, by_ref, name, args, counter)
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
        counter: ApplyCounter,
    ) -> tuple[str, Verdict, int]:
        refs = args.get("refs")
        cited = list(dict.fromkeys(str(r)[:200] for r in refs[:MAX_REFS])) if isinstance(refs, list) else []
        unknown = [r for r in cited if r not in by_ref]
        known = uow.fragments.by_refs([r for r in cited if r in by_ref])
        found = [known[r] for r in cited if r in known]
        cited_owner = any(f.author is Author.OWNER for f in found)
        if not cited_owner:  # nothing usable cited: the owner's messages stand in (never auto-applied)
            owner_refs = [m.ref for m in snapshot.messages if m.role == "owner"]
            found += [f for f in uow.fragments.by_refs(owner_refs).values() if f.author is Author.OWNER]
        if not any(f.author is Author.OWNER for f in found):
            raise _Refused("no message of the owner in this conversation supports it")
        via = Via(
            conversation=snapshot.conversation_id, tool=name, cited_refs=tuple(cited), cited_owner=cited_owner
        )
        statement, subject, category, proposal = self._proposal(uow, name, args, via)
        landed = land(
            uow,
            Proposed(
                statement=statement,
                subject=subject,
                category=category,
                proposal=proposal,
                origin="review",
                run_id=None,
                cited=found,
                rejected_refs=unknown,
                journal={"conversation": snapshot.conversation_id, "tool": name},
            ),
            self._clock.now(),
        )
        candidate = uow.candidates.get(landed.candidate_id)
        assert candidate is not None
        verdict = select_candidate(
            uow,
            candidate,
            now=self._clock.now(),
            config=self._sleep.selection(),
            applied=uow.facts.all(FactStatus.APPLIED),
            counter=counter,
            run_id=None,
        )
        decided = uow.candidates.get(landed.candidate_id)
        reason = decided.reason if decided is not None and decided.reason else verdict.value
        cid = landed.candidate_id
        said = {
            Verdict.APPLY: f"applied by the policy as a proven owner fact (candidate {cid})",
            Verdict.PENDING: f"waiting for the owner's review as candidate {cid} ({reason})",
            Verdict.DROP: f"dropped by the policy ({reason})",
        }[verdict]
        return f"Proposed: {said}.", verdict, cid

    def _proposal(
        self, uow: UnitOfWork, name: str, args: dict[str, Any], via: Via
    ) -> tuple[str, Subject, str | None, Proposal]:
        """The tool call as a typed proposal: its statement, subject and category too."""
        category: str | None = _text(args.get("category"), 40) or None
        if name == "propose_fact":
            statement = self._statement(args)
            raw_subject = str(args.get("subject") or "owner").strip().lower()
            subject = Subject(raw_subject) if raw_subject in Subject._value2member_map_ else Subject.UNKNOWN
            return statement, subject, category, NewFact(via)
        if name == "propose_fact_update":
            statement = self._statement(args)
            target = self._applied_fact(uow, args.get("fact_id"))
            return statement, target.subject, category or target.category, FactUpdate(target.id, via)
        if name == "propose_forget":
            target = self._applied_fact(uow, args.get("fact_id"))
            reason = _text(args.get("reason"), MAX_STATEMENT) or "no reason given"
            return (
                f"Forget: {target.statement}",
                target.subject,
                target.category,
                Forget(target.id, reason, via),
            )
        skill = skill_name(args.get("name"))
        proposal: SkillProposal
        if name == "propose_skill":
            content = _text(args.get("content"), 20_000, keep_lines=True)
            proposal = NewSkill(skill, content, via)
            statement = f"New skill {skill}: {_condensed(content)}"
        else:
            old, new = str(args.get("old_text") or ""), str(args.get("new_text") or "")
            proposal = SkillPatch(skill, old, new, via)
            statement = f"Patch skill {skill}: replace \u201c{_condensed(old)}\u201d with \u201c{_condensed(new)}\u201d"
        check_proposal(uow, proposal)
        return statement, Subject.OWNER, "skill", proposal

    @staticmethod
    def _statement(args: dict[str, Any]) -> str:
        statement = _text(args.get("statement"), MAX_STATEMENT)
        if not statement:
            raise _Refused("a fact needs a statement")
        return statement

    def _applied_fact(self, uow: UnitOfWork, raw: object) -> Fact:
        text = str(raw).strip()
        if not text.isdigit() or len(text) > 18:
            raise _Refused(f"{str(raw)[:40]!r} is not a fact number")
        fact = uow.facts.get(int(text))
        if fact is None or fact.status is not FactStatus.APPLIED:
            raise _Refused(f"fact {text} is not a current fact")
        return fact

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
    """The model's arguments as journaled: short, and strict JSON (a NaN becomes null)."""
    clipped = {str(k)[:60]: (v[:200] if isinstance(v, str) else v) for k, v in list(args.items())[:10]}
    return dict(json_safe(clipped))
