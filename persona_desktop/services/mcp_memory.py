"""What other assistants may read and propose over MCP, within the owner's read scopes.

Plain functions returning JSON-ready dicts; the SDK wiring is `persona_desktop/mcp_server.py`.
Scopes: `facts` (applied facts and their provenance, without the captured text), and
`chat`, `screen`, `speech` (captured fragments of that kind: search hits, and the text,
ref and source of a fact's evidence). Anything outside the scopes is refused, never
silently filtered, and refused before anything is looked up: a client without a scope
learns nothing from an error either. A ref or a decision's reason can name a contact
(`chat:<contact>:<id>`, "'Mallory' appears only in Alice's message"): a client sees one
only where it may read every piece of the fact's evidence. A fact that is no longer in
memory answers as one that never was.

`propose_fact` answers the same whatever becomes of the proposal (`RECEIVED`): whether it
matched something waiting, was known already or was refused before is the owner's to see,
in the review and the journal, never the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from persona_desktop.domain.model import FactStatus, Subject
from persona_desktop.errors import NotFoundError, PersonaError
from persona_desktop.ports import UnitOfWorkFactory
from persona_desktop.services import queries, review
from persona_desktop.services.outside_proposals import DEFAULT_SELECTION, propose_untrusted_fact
from persona_desktop.services.search import KINDS, parse_kind, parse_since, search
from persona_desktop.services.select import SelectConfig

SCOPES = ("facts", "chat", "screen", "speech")
MAX_RESULTS = 100
RECEIVED: dict[str, str] = {
    "status": "received",
    "message": (
        "Received for the owner's review. Nothing proposed over MCP is remembered unless the "
        "owner approves it, and what becomes of a proposal is shown to the owner only."
    ),
}


class ScopeError(PersonaError):
    """The owner did not allow this read."""


@dataclass(frozen=True, slots=True)
class McpPolicy:
    scopes: frozenset[str]
    allow_proposals: bool
    selection: SelectConfig = DEFAULT_SELECTION  # what the one policy decides proposals with

    def searchable(self) -> frozenset[str]:
        return frozenset(("fact" if s == "facts" else s) for s in self.scopes)

    def need_facts(self) -> None:
        if "facts" not in self.scopes:
            raise ScopeError("reading facts is not allowed: the owner can add `facts` to mcp.read_scopes")


def search_memory(
    uow: UnitOfWorkFactory,
    policy: McpPolicy,
    query: str,
    kind: str | None = None,
    since: str | None = None,
    limit: int = 20,
) -> dict[str, Any]:
    kind = parse_kind(kind)
    allowed = policy.searchable()
    if kind is not None and kind not in allowed:
        scope = "facts" if kind == "fact" else kind
        raise ScopeError(f"searching {kind} is not allowed: the owner can add `{scope}` to mcp.read_scopes")
    results = search(uow, query, kind, parse_since(since), min(max(1, limit), MAX_RESULTS), allowed)
    return {
        "results": [r.to_json() for r in results],
        "searched": sorted(k for k in KINDS if k in allowed and (kind is None or k == kind)),
    }


def list_facts(uow: UnitOfWorkFactory, policy: McpPolicy, query: str = "", limit: int = 50) -> dict[str, Any]:
    policy.need_facts()
    views = queries.facts(uow, FactStatus.APPLIED, query)
    views = sorted(views, key=lambda v: v.fact.id, reverse=True)[: min(max(1, limit), MAX_RESULTS)]
    return {
        "facts": [
            {
                "id": v.fact.id,
                "statement": v.fact.statement,
                "subject": v.fact.subject.value,
                "category": v.fact.category,
                "since": v.fact.valid_from.isoformat(),
                "evidence_count": len(v.refs),
            }
            for v in views
        ]
    }


def why(uow: UnitOfWorkFactory, policy: McpPolicy, fact_id: int) -> dict[str, Any]:
    """A fact's provenance; each piece of evidence with its text only where its kind is in scope."""
    policy.need_facts()
    missing = NotFoundError(f"no fact with id {fact_id}")  # not in memory now, or never was: one answer
    if not 0 < int(fact_id) < 2**63:  # beyond SQLite's integers: no such fact, not an overflow
        raise missing
    try:
        prov = review.why(uow, int(fact_id))
    except NotFoundError:
        raise missing from None
    if prov.fact.status is not FactStatus.APPLIED:
        raise missing
    evidence = []
    for item in prov.evidence:
        f = item.fragment
        entry: dict[str, Any] = {
            "kind": f.kind.value,
            "author": f.author.value,
            "trust": f.trust.value,
            "captured_at": f.captured_at.isoformat(),
        }
        if f.kind.value in policy.scopes:
            entry.update(ref=f.ref, text=f.text, source=item.source_label)
        else:
            entry["text_withheld"] = f"the owner has not allowed reading {f.kind.value} captures"
        evidence.append(entry)
    c = prov.candidate
    candidate: dict[str, Any] | None = None
    if c is not None:
        candidate = {"id": c.id, "origin": c.origin, "score": c.score}
        if all(e["kind"] in policy.scopes for e in evidence):  # a reason may quote refs and names
            candidate["reason"] = c.reason
        else:
            candidate["reason_withheld"] = "it may name sources the owner has not allowed reading"
    return {
        "fact": {
            "id": prov.fact.id,
            "statement": prov.fact.statement,
            "since": prov.fact.valid_from.isoformat(),
        },
        "candidate": candidate,
        "evidence": evidence,
        "decisions": [{"at": d["at"], "actor": d["actor"], "action": d["action"]} for d in prov.decisions],
    }


def propose_fact(
    uow: UnitOfWorkFactory,
    policy: McpPolicy,
    at: datetime,
    client: str,
    statement: str,
    source_text: str = "",
    subject: str = "owner",
) -> dict[str, Any]:
    if not policy.allow_proposals:
        raise ScopeError("proposals are switched off: the owner can set mcp.allow_proposals true")
    subj = Subject(subject) if subject in Subject._value2member_map_ else Subject.UNKNOWN
    propose_untrusted_fact(  # its outcome is journaled for the owner, never told to the caller
        uow,
        statement=statement,
        source_text=source_text,
        client=client,
        at=at,
        subject=subj,
        config=policy.selection,
    )
    return dict(RECEIVED)
