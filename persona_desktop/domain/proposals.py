"""Typed proposals: what a candidate would change in memory if the owner (or the policy) said yes.

A tagged union of frozen dataclasses: a new fact, an update of a known fact, a forget,
a new skill, a patch to a skill. Each carries `Via`, how it reached the queue (which
document or conversation, which tool, which refs the model cited, its confidence).
The store keeps a proposal as a JSON payload: `to_payload` / `from_payload` are the
only places that know its shape, and `from_payload` also reads the payloads written
before proposals were typed.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from persona_desktop.domain.text import statement_key

JsonValue = Any  # a value json.dumps writes (finite numbers only: see finite.py)


class ProposalKind(StrEnum):
    FACT = "fact"
    FACT_UPDATE = "fact_update"
    FORGET = "forget"
    SKILL = "skill"
    SKILL_PATCH = "skill_patch"


OWNER_ONLY_KINDS = frozenset(
    {ProposalKind.FACT_UPDATE, ProposalKind.FORGET, ProposalKind.SKILL, ProposalKind.SKILL_PATCH}
)
"""Kinds the policy never applies: only the owner may change or remove what is known."""


@dataclass(frozen=True, slots=True)
class Via:
    """How a proposal reached the queue. Journal and review only, except `cited_owner`."""

    document: str | None = None  # the sleep cycle's document digest, first seen in
    conversation: str | None = None  # the turn review's conversation id
    tool: str | None = None  # the turn review's tool
    cited_refs: tuple[str, ...] = ()
    cited_owner: bool = True  # False: the review cited no message of the owner's
    confidence: float | None = None
    raw: Mapping[str, JsonValue] = field(default_factory=dict)  # the model's item, as sent

    @property
    def batch(self) -> str | None:
        """What the per-document auto-apply cap counts in: the document or the conversation."""
        return self.document or self.conversation


@dataclass(frozen=True, slots=True)
class NewFact:
    via: Via = Via()
    kind: ClassVar[ProposalKind] = ProposalKind.FACT


@dataclass(frozen=True, slots=True)
class FactUpdate:
    """Replace known fact `fact_id` with the candidate's statement."""

    fact_id: int
    via: Via = Via()
    kind: ClassVar[ProposalKind] = ProposalKind.FACT_UPDATE


@dataclass(frozen=True, slots=True)
class Forget:
    fact_id: int
    reason: str
    via: Via = Via()
    kind: ClassVar[ProposalKind] = ProposalKind.FORGET


@dataclass(frozen=True, slots=True)
class NewSkill:
    name: str
    content: str
    via: Via = Via()
    kind: ClassVar[ProposalKind] = ProposalKind.SKILL


@dataclass(frozen=True, slots=True)
class SkillPatch:
    name: str
    old: str
    new: str
    via: Via = Via()
    kind: ClassVar[ProposalKind] = ProposalKind.SKILL_PATCH


Proposal = NewFact | FactUpdate | Forget | NewSkill | SkillPatch
SkillProposal = NewSkill | SkillPatch


def is_fact(proposal: Proposal) -> bool:
    """Approving it adds a fact (a new one, or one that replaces a known fact)."""
    return isinstance(proposal, NewFact | FactUpdate)


def candidate_key(statement: str, proposal: Proposal) -> str:
    """The key that recognizes the same proposal again (and a refused one)."""
    match proposal:
        case Forget(fact_id=fact_id):
            return f"forget:{fact_id}"
        case NewSkill() | SkillPatch():
            body = _skill_body(proposal)
            digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
            return f"skill:{proposal.name}:{digest}"
        case _:
            return statement_key(statement)


def _skill_body(p: SkillProposal) -> dict[str, str]:
    if isinstance(p, NewSkill):
        return {"action": "create", "name": p.name, "content": p.content}
    return {"action": "patch", "name": p.name, "old": p.old, "new": p.new}


# --- the store boundary ---------------------------------------------------------------


def to_payload(proposal: Proposal) -> dict[str, JsonValue]:
    v = proposal.via
    via: dict[str, JsonValue] = {
        "document": v.document,
        "conversation": v.conversation,
        "tool": v.tool,
        "cited_refs": list(v.cited_refs),
        "cited_owner": v.cited_owner,
        "confidence": v.confidence,
        "raw": dict(v.raw),
    }
    body: dict[str, JsonValue] = {"proposal": proposal.kind.value, "via": via}
    match proposal:
        case FactUpdate(fact_id=fact_id):
            body["fact_id"] = fact_id
        case Forget(fact_id=fact_id, reason=reason):
            body.update(fact_id=fact_id, reason=reason)
        case NewSkill(name=name, content=content):
            body.update(name=name, content=content)
        case SkillPatch(name=name, old=old, new=new):
            body.update(name=name, old=old, new=new)
    return body


def from_payload(payload: Mapping[str, JsonValue] | None) -> Proposal:
    """A stored payload back as a proposal; payloads of before typing are read too.

    Never raises: an unreadable payload is a plain new fact (which the policy only
    applies when it is grounded like any other).
    """
    data = payload if isinstance(payload, Mapping) else {}
    if "proposal" in data:
        via = _via(data.get("via"))
        tag = data.get("proposal")
    else:  # the untyped shapes: sleep {"confidence", "updates_fact", "raw"}, review {"action", ...}
        via = _via(data)
        tag = _legacy_tag(data)
    fact_id = _int(data.get("fact_id"))
    if fact_id is None and "proposal" not in data:
        fact_id = _int(data.get("updates_fact"))
    if tag == ProposalKind.FACT_UPDATE and fact_id is not None:
        return FactUpdate(fact_id, via)
    if tag == ProposalKind.FORGET and fact_id is not None:
        return Forget(fact_id, _str(data.get("reason")), via)
    if tag == ProposalKind.SKILL:
        return NewSkill(_str(data.get("name")), _str(data.get("content")), via)
    if tag == ProposalKind.SKILL_PATCH:
        return SkillPatch(_str(data.get("name")), _str(data.get("old")), _str(data.get("new")), via)
    return NewFact(via)


def _legacy_tag(data: Mapping[str, JsonValue]) -> ProposalKind:
    action = data.get("action")
    if data.get("kind") == "skill":
        return ProposalKind.SKILL_PATCH if action == "patch" else ProposalKind.SKILL
    if action == "forget":
        return ProposalKind.FORGET
    if action == "update" or _int(data.get("updates_fact")) is not None:
        return ProposalKind.FACT_UPDATE
    return ProposalKind.FACT


def _via(raw: JsonValue) -> Via:
    """`via` as stored; before typing, the same fields sat at the top of the payload."""
    data = raw if isinstance(raw, Mapping) else {}
    refs = data.get("cited_refs")
    model = data.get("raw")
    return Via(
        document=_opt_str(data.get("document")),
        conversation=_opt_str(data.get("conversation")),
        tool=_opt_str(data.get("tool")),
        cited_refs=tuple(str(r) for r in refs) if isinstance(refs, list) else (),
        cited_owner=data.get("cited_owner") is not False and data.get("evidence") != "snapshot",
        confidence=_confidence(data.get("confidence")),
        raw=model if isinstance(model, dict) else {},
    )


def _confidence(value: JsonValue) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None


def _int(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: JsonValue) -> str:
    return value if isinstance(value, str) else ""


def _opt_str(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None
