"""The owner's decisions: approve (optionally edited), reject, undo, revert, forget a source.

Every decision is journaled; `undo` reverses the newest decision not yet undone,
so pressing it repeatedly walks back through history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from persona_desktop.domain.dates import local_day_bounds
from persona_desktop.domain.model import Candidate, CandidateStatus, Fact, FactStatus, Fragment, Kind
from persona_desktop.domain.proposals import Forget, NewSkill, SkillPatch, is_fact
from persona_desktop.domain.text import statement_key
from persona_desktop.errors import NotFoundError, StateError
from persona_desktop.ports import UnitOfWork, UnitOfWorkFactory
from persona_desktop.services import skills
from persona_desktop.services.media import delete_media, media_paths

DECISIONS = ("candidate.approved", "candidate.rejected", "fact.reverted", "source.forgotten")
UNDO = "decision.undone"
_DECIDABLE = (CandidateStatus.PENDING, CandidateStatus.DROPPED)


def _candidate(uow: UnitOfWork, candidate_id: int) -> Candidate:
    candidate = uow.candidates.get(candidate_id)
    if candidate is None:
        raise NotFoundError(f"no candidate with id {candidate_id}")
    return candidate


def _fact(uow: UnitOfWork, fact_id: int) -> Fact:
    fact = uow.facts.get(fact_id)
    if fact is None:
        raise NotFoundError(f"no fact with id {fact_id}")
    return fact


def _apply_candidate(uow: UnitOfWork, candidate: Candidate, statement: str, at: datetime) -> dict[str, Any]:
    key = statement_key(statement)
    known = uow.facts.applied_by_key(key)
    if known is not None:
        raise StateError(f"candidate {candidate.id} is already known as fact {known.id}")
    superseded: list[int] = []
    target = candidate.supersedes_fact_id
    if target is not None:
        old = uow.facts.get(target)
        if old is not None and old.status is FactStatus.APPLIED:
            superseded.append(old.id)
    fact_id = uow.facts.add(
        statement=statement,
        subject=candidate.subject,
        key=key,
        category=candidate.category,
        candidate_id=candidate.id,
        valid_from=at,
    )
    for old_id in superseded:
        uow.facts.set_status(old_id, FactStatus.SUPERSEDED, at, superseded_by=fact_id)
    return {"fact_id": fact_id, "superseded": superseded}


def _apply_proposal(uow: UnitOfWork, candidate: Candidate, at: datetime) -> dict[str, Any] | None:
    """The turn review's proposals that are not facts: forget a fact, write or patch a skill."""
    proposal = candidate.proposal
    if isinstance(proposal, NewSkill | SkillPatch):
        return skills.apply_proposal(uow, proposal, at)
    if isinstance(proposal, Forget):
        fact = _fact(uow, proposal.fact_id)
        if fact.status is not FactStatus.APPLIED:
            raise StateError(f"fact {fact.id} is {fact.status.value}, nothing to forget")
        return {"forgot_fact_id": fact.id, "restored": _revert(uow, fact, at)}
    return None


def approve(
    uow_factory: UnitOfWorkFactory, candidate_id: int, at: datetime, statement: str | None = None
) -> int:
    """Approve a waiting candidate, optionally with the owner's own wording; returns the fact id."""
    with uow_factory() as uow:
        candidate = _candidate(uow, candidate_id)
        if candidate.status not in _DECIDABLE:
            raise StateError(f"candidate {candidate_id} is {candidate.status.value}, not waiting for review")
        text = " ".join((statement or candidate.statement).split())
        if not text:
            raise StateError("an approved fact needs a statement")
        data: dict[str, Any] = {"statement": text, "previous_status": candidate.status.value}
        if statement is not None and text != candidate.statement and not is_fact(candidate.proposal):
            raise StateError(
                f"candidate {candidate_id} proposes a forget or a skill: approve or reject it as it is"
            )
        proposal = _apply_proposal(uow, candidate, at)  # a review's forget or skill: no fact is added
        if proposal is not None:
            data.update(proposal)
        else:
            if text != candidate.statement:
                data["edited_from"] = candidate.statement
                uow.candidates.set_statement(candidate_id, text, statement_key(text))
            data.update(_apply_candidate(uow, candidate, text, at))
        uow.candidates.set_status(candidate_id, CandidateStatus.APPROVED, None, at)
        uow.journal.append(
            at=at,
            actor="owner",
            action="candidate.approved",
            entity="candidate",
            entity_id=candidate_id,
            data=data,
        )
        uow.commit()
        return int(data.get("fact_id", data.get("forgot_fact_id", data.get("skill_id", 0))))


def reject(uow_factory: UnitOfWorkFactory, candidate_id: int, at: datetime) -> None:
    with uow_factory() as uow:
        candidate = _candidate(uow, candidate_id)
        if candidate.status not in _DECIDABLE:
            raise StateError(f"candidate {candidate_id} is {candidate.status.value}, not waiting for review")
        uow.candidates.set_status(candidate_id, CandidateStatus.REJECTED, None, at)
        uow.journal.append(
            at=at,
            actor="owner",
            action="candidate.rejected",
            entity="candidate",
            entity_id=candidate_id,
            data={"statement": candidate.statement, "previous_status": candidate.status.value},
        )
        uow.commit()


def _revert(uow: UnitOfWork, fact: Fact, at: datetime) -> list[int]:
    uow.facts.set_status(fact.id, FactStatus.REVERTED, at, superseded_by=fact.superseded_by)
    restored = []
    for old in uow.facts.superseded_by(fact.id):
        if old.status is FactStatus.SUPERSEDED:
            uow.facts.set_status(old.id, FactStatus.APPLIED, None, None)
            restored.append(old.id)
    return restored


def revert_fact(uow_factory: UnitOfWorkFactory, fact_id: int, at: datetime) -> None:
    """Roll a fact back; a fact it had superseded becomes current again."""
    with uow_factory() as uow:
        fact = _fact(uow, fact_id)
        if fact.status is not FactStatus.APPLIED:
            raise StateError(f"fact {fact_id} is {fact.status.value}, not applied")
        restored = _revert(uow, fact, at)
        uow.journal.append(
            at=at,
            actor="owner",
            action="fact.reverted",
            entity="fact",
            entity_id=fact_id,
            data={"statement": fact.statement, "restored": restored},
        )
        uow.commit()


def _forget(uow: UnitOfWork, source_ids: Sequence[int], at: datetime) -> dict[str, Any]:
    """Revert facts citing these sources, drop their waiting candidates, delete their fragments."""
    reverted: list[int] = []
    dropped: list[int] = []
    keys: list[str] = []
    media: set[str] = set()
    deleted = 0
    for source_id in source_ids:
        found = uow.sources.get(source_id)
        if found is None:
            raise NotFoundError(f"no source with id {source_id}")
        info, _ = found
        keys.append(info.key)
        for candidate in uow.candidates.citing_source(source_id):
            fact = uow.facts.by_candidate(candidate.id)
            if fact is not None and fact.status is FactStatus.APPLIED:
                _revert(uow, fact, at)
                reverted.append(fact.id)
            if candidate.status is CandidateStatus.PENDING:
                uow.candidates.set_status(
                    candidate.id, CandidateStatus.DROPPED, f"source {info.key} forgotten", at
                )
                dropped.append(candidate.id)
        media |= media_paths(uow.fragments.of_source(source_id))
        deleted += uow.fragments.delete_source(source_id)
    return {
        "sources": keys,
        "fragments": deleted,
        "reverted": reverted,
        "dropped": dropped,
        "media": sorted(media),
    }


def _counts(done: dict[str, Any], data_dir: Path | None) -> dict[str, int]:
    """After the commit: delete the forgotten fragments' kept crops and clips too."""
    counts = {
        "fragments": int(done["fragments"]),
        "facts_reverted": len(done["reverted"]),
        "candidates_dropped": len(done["dropped"]),
    }
    if data_dir is not None:
        counts["media_files"] = delete_media(done["media"], data_dir)
    return counts


def forget_source(
    uow_factory: UnitOfWorkFactory, source_id: int, at: datetime, data_dir: Path | None = None
) -> dict[str, int]:
    """Forget everything learned from a source: revert its facts, drop its candidates, delete its fragments.

    Not undoable: the fragments are gone. The journal keeps what was forgotten.
    """
    with uow_factory() as uow:
        found = uow.sources.get(source_id)
        label = found[0].label if found else ""
        done = _forget(uow, [source_id], at)
        uow.journal.append(
            at=at,
            actor="owner",
            action="source.forgotten",
            entity="source",
            entity_id=source_id,
            data={
                "source": done["sources"][0],
                "label": label,
                **{k: done[k] for k in ("fragments", "reverted", "dropped")},
            },
        )
        uow.commit()
    return _counts(done, data_dir)


def forget_day(
    uow_factory: UnitOfWorkFactory, kind: Kind, day: date, at: datetime, data_dir: Path | None = None
) -> dict[str, int]:
    """Forget every source of `kind` captured on a local calendar day (a day of screen captures)."""
    start, end = local_day_bounds(day)  # 0001-01-01 and 9999-12-31 included
    with uow_factory() as uow:
        ids = uow.sources.captured_between(kind, start, end)
        done = _forget(uow, ids, at)
        uow.journal.append(
            at=at,
            actor="owner",
            action="source.forgotten",
            entity="day",
            data={"kind": kind.value, "day": day.isoformat(), **done},
        )
        uow.commit()
    return {"sources": len(ids), **_counts(done, data_dir)}


def undo(uow_factory: UnitOfWorkFactory, at: datetime, expect: tuple[str, int] | None = None) -> str:
    """Reverse the newest owner decision not yet undone; returns what was undone.

    `expect` (action, entity id) is for an Undo button that belongs to one decision:
    if another decision came after it (in another window, say), nothing is undone."""
    with uow_factory() as uow:
        entries = uow.journal.all(actions=(*DECISIONS, UNDO))
        undone = {int(e.data["undoes"]) for e in entries if e.action == UNDO}
        target = next(
            (
                e
                for e in reversed(entries)
                if e.action in DECISIONS and e.actor == "owner" and e.id not in undone
            ),
            None,
        )
        if target is None:
            raise StateError("nothing to undo")
        if expect is not None and (target.action, target.entity_id) != expect:
            raise StateError(
                "another decision came after this one: undo that first (Ctrl+Z in the review window)"
            )
        if target.action == "source.forgotten":
            raise StateError(
                "the last decision forgot a source; its fragments are deleted and cannot be restored"
            )
        assert target.entity_id is not None
        if target.action == "candidate.approved" and "fact_id" not in target.data:
            if "skill_id" in target.data:
                skills.undo_proposal(uow, target.data, at)
                what = f"skill {target.data.get('skill_name')} restored"
            else:  # a forget: the fact comes back, and what it had superseded steps aside again
                forgot = _fact(uow, int(target.data["forgot_fact_id"]))
                uow.facts.set_status(forgot.id, FactStatus.APPLIED, None, None)
                for old_id in target.data.get("restored", []):
                    uow.facts.set_status(int(old_id), FactStatus.SUPERSEDED, at, superseded_by=forgot.id)
                what = f"fact {forgot.id} remembered again"
            previous = CandidateStatus(target.data.get("previous_status", "pending"))
            uow.candidates.set_status(target.entity_id, previous, None, at)
            description = f"approval of candidate {target.entity_id} undone ({what})"
        elif target.action == "candidate.approved":
            fact_id = int(target.data["fact_id"])
            fact = uow.facts.get(fact_id)
            if fact is not None:
                for old in uow.facts.superseded_by(fact_id):
                    uow.facts.set_status(old.id, FactStatus.APPLIED, None, None)
                uow.facts.delete(fact_id)
            if "edited_from" in target.data:
                original = str(target.data["edited_from"])
                uow.candidates.set_statement(target.entity_id, original, statement_key(original))
            previous = CandidateStatus(target.data.get("previous_status", "pending"))
            uow.candidates.set_status(target.entity_id, previous, None, at)
            description = f"approval of candidate {target.entity_id} undone (fact {fact_id} removed)"
        elif target.action == "candidate.rejected":
            previous = CandidateStatus(target.data.get("previous_status", "pending"))
            uow.candidates.set_status(target.entity_id, previous, None, at)
            description = f"rejection of candidate {target.entity_id} undone"
        else:  # fact.reverted
            fact = _fact(uow, target.entity_id)
            uow.facts.set_status(fact.id, FactStatus.APPLIED, None, None)
            for old_id in target.data.get("restored", []):
                uow.facts.set_status(int(old_id), FactStatus.SUPERSEDED, at, superseded_by=fact.id)
            description = f"revert of fact {fact.id} undone"
        uow.journal.append(
            at=at,
            actor="owner",
            action=UNDO,
            entity=target.entity,
            entity_id=target.entity_id,
            data={"undoes": target.id, "action": target.action, "description": description},
        )
        uow.commit()
    return description


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    fragment: Fragment
    source_key: str
    source_label: str
    context: list[Fragment]

    def to_json(self) -> dict[str, Any]:
        """The evidence in the CLI's JSON (`facts why ID --json`): the fragment, its source, its context."""
        return {
            **self.fragment.to_json(),
            "source": self.source_key,
            "source_label": self.source_label,
            "context": [{"ref": c.ref, "author": c.author.value, "text": c.text} for c in self.context],
        }


@dataclass(frozen=True, slots=True)
class Provenance:
    fact: Fact
    candidate: Candidate | None
    evidence: list[EvidenceItem]
    decisions: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        """The provenance chain in the CLI's JSON (DESIGN.md, CLI contract: `facts why ID`)."""
        f, c = self.fact, self.candidate
        return {
            "fact": {"id": f.id, "statement": f.statement, "status": f.status.value},
            "candidate": None
            if c is None
            else {"id": c.id, "statement": c.statement, "score": c.score, "signals": c.signals},
            "evidence": [item.to_json() for item in self.evidence],
            "decisions": self.decisions,
        }


def evidence_item(uow: UnitOfWork, fragment: Fragment, context: int = 2) -> EvidenceItem:
    """A fragment with its source and, for context, its neighbours in the same session."""
    found = uow.sources.get(fragment.source_id)
    key, label = (found[0].key, found[0].label) if found else ("?", "?")
    around = uow.fragments.around(fragment, context, context) if context else [fragment]
    return EvidenceItem(fragment, key, label, around)


def evidence_items(uow: UnitOfWork, candidate_id: int, context: int = 2) -> list[EvidenceItem]:
    return [evidence_item(uow, f, context) for f in uow.candidates.evidence(candidate_id)]


def why(uow_factory: UnitOfWorkFactory, fact_id: int) -> Provenance:
    """The provenance chain of a fact: its candidate, the evidence, the sources, the decisions."""
    with uow_factory.read() as uow:
        fact = _fact(uow, fact_id)
        candidate = uow.candidates.get(fact.candidate_id) if fact.candidate_id is not None else None
        evidence = evidence_items(uow, candidate.id) if candidate else []
        decisions = [
            {"id": r.id, "at": r.at.isoformat(), "actor": r.actor, "action": r.action, "data": r.data}
            for r in uow.journal.all()
            if (r.entity == "fact" and r.entity_id == fact_id)
            or (candidate is not None and r.entity == "candidate" and r.entity_id == candidate.id)
        ]
    return Provenance(fact, candidate, evidence, decisions)
