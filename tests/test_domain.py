"""Pure domain rules: scoring, the policy, documents and the cursor, reply parsing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from persona_desktop.domain.documents import build_documents, plan_documents
from persona_desktop.domain.extraction import parse_extraction
from persona_desktop.domain.grounding import Grounding
from persona_desktop.domain.model import Author, Fragment, FragmentHead, Kind, Subject, Trust
from persona_desktop.domain.policy import Limits, PolicyInput, Tally, Verdict, decide
from persona_desktop.domain.proposals import ProposalKind
from persona_desktop.domain.scoring import DEFAULT_WEIGHTS, normalize_weights, score
from persona_desktop.domain.text import contradicts, statement_key

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def frag(
    i: int, source: int = 1, session: str = "s", hours: float = 0, author: Author = Author.OWNER
) -> Fragment:
    return Fragment(
        i,
        f"r{i}",
        Kind.CHAT,
        author,
        Trust.TRUSTED,
        f"text {i}",
        NOW + timedelta(hours=hours),
        {},
        session,
        source,
        i,
    )


def test_weights_renormalize_to_one() -> None:
    w = normalize_weights({k: v * 3 for k, v in DEFAULT_WEIGHTS.items()})
    assert sum(w.values()) == pytest.approx(1.0)
    assert w["relevance"] == pytest.approx(0.30)
    assert score(dict.fromkeys(w, 1.0), w) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="all be zero"):
        normalize_weights(dict.fromkeys(DEFAULT_WEIGHTS, 0.0))


def test_score_is_the_weighted_sum_of_the_design() -> None:
    signals = {
        "relevance": 1,
        "frequency": 0.5,
        "diversity": 0,
        "recency": 1,
        "consolidation": 0,
        "richness": 1,
    }
    assert score(signals, DEFAULT_WEIGHTS) == pytest.approx(0.30 + 0.12 + 0.15 + 0.06)


GROUNDED = Grounding(True, "in your own words (r1)", ("peanuts",), "r1")
LIMITS = Limits(threshold=0.6, review_floor=0.3, per_document=3, per_run=10)


def _policy(**kw: object) -> PolicyInput:
    base: dict[str, object] = dict(
        kind=ProposalKind.FACT,
        subject=Subject.OWNER,
        score=0.8,
        rejected_refs=0,
        evidence=1,
        owner_trusted_evidence=1,
        grounding=GROUNDED,
        cited_owner=True,
        contradicts_fact_id=None,
        already_known_fact_id=None,
        refused_before=False,
        from_outside=False,
    )
    base.update(kw)
    return PolicyInput(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "verdict"),
    [
        ({}, Verdict.APPLY),
        ({"subject": Subject.OTHER}, Verdict.PENDING),
        ({"subject": Subject.UNKNOWN}, Verdict.PENDING),
        ({"score": 0.5}, Verdict.PENDING),
        ({"score": float("nan")}, Verdict.PENDING),
        ({"score": float("inf")}, Verdict.PENDING),
        ({"rejected_refs": 1}, Verdict.PENDING),
        ({"owner_trusted_evidence": 0}, Verdict.PENDING),
        (
            {"grounding": Grounding(False, "'Mallory' appears only in Alice's message", ("Mallory",))},
            Verdict.PENDING,
        ),
        ({"cited_owner": False}, Verdict.PENDING),
        ({"contradicts_fact_id": 3}, Verdict.PENDING),
        ({"refused_before": True}, Verdict.PENDING),
        ({"kind": ProposalKind.FACT_UPDATE}, Verdict.PENDING),
        ({"kind": ProposalKind.FORGET}, Verdict.PENDING),
        ({"kind": ProposalKind.SKILL}, Verdict.PENDING),
        ({"kind": ProposalKind.SKILL_PATCH}, Verdict.PENDING),
        ({"score": 0.1}, Verdict.DROP),
        ({"evidence": 0, "owner_trusted_evidence": 0}, Verdict.DROP),
        ({"already_known_fact_id": 2}, Verdict.DROP),
        ({"from_outside": True}, Verdict.PENDING),  # another assistant over MCP: however strong
        ({"from_outside": True, "evidence": 0, "owner_trusted_evidence": 0, "score": 0.0}, Verdict.PENDING),
        ({"from_outside": True, "refused_before": True}, Verdict.DROP),
        ({"from_outside": True, "already_known_fact_id": 2}, Verdict.DROP),
    ],
)
def test_policy_applies_only_proven_owner_facts(change: dict[str, object], verdict: Verdict) -> None:
    assert decide(_policy(**change), LIMITS).verdict is verdict


def test_policy_caps_say_too_many_at_once() -> None:
    assert decide(_policy(), LIMITS, Tally(in_document=2, in_run=9)).verdict is Verdict.APPLY
    for tally in (Tally(in_document=3, in_run=3), Tally(in_document=0, in_run=10)):
        decision = decide(_policy(), LIMITS, tally)
        assert decision.verdict is Verdict.PENDING and decision.reason.startswith("too many at once")
    never = Limits(threshold=0.6, review_floor=0.3, per_document=0, per_run=10)
    assert decide(_policy(), never).verdict is Verdict.PENDING
    ungrounded = decide(
        _policy(grounding=Grounding(False, "'Mallory' appears only in Alice's message", ("Mallory",))), LIMITS
    )
    assert ungrounded.reason == "not in your own words: 'Mallory' appears only in Alice's message"


def test_statement_keys_and_contradictions() -> None:
    assert statement_key("I  like  Tea.") == statement_key("i like tea")
    assert contradicts("I drink coffee", "I don't drink coffee")
    assert not contradicts("I drink coffee", "I drink tea")
    assert not contradicts("I drink coffee", "I drink coffee")


def test_documents_group_by_source_session_day_and_keep_id_order() -> None:
    frags = [frag(1), frag(2, source=2), frag(3), frag(4, hours=30), frag(5, source=2)]
    docs = build_documents(frags)
    assert [[f.id for f in d.fragments] for d in docs] == [[1, 3], [2, 5], [4]]
    assert docs[0].lines() == ["[r1] text 1", "[r3] text 3"]


def test_planning_on_heads_matches_building_on_fragments() -> None:
    frags = [frag(i, source=i % 3, hours=i % 40) for i in range(1, 400)]
    heads = [
        FragmentHead(f.id, f.ref, f.source_id, f.session, f.captured_at, f.seq, len(f.text)) for f in frags
    ]
    assert plan_documents(heads) == [[f.id for f in d.fragments] for d in build_documents(frags)]


def test_reply_parsing_keeps_good_candidates_and_names_problems() -> None:
    refs = frozenset({"a", "b"})
    content = (
        '{"candidates": [{"statement": "ok", "subject": "owner", "refs": ["a", "zzz"], "confidence": 90},'
        ' {"statement": "", "subject": "owner", "refs": ["a"]},'
        ' {"statement": "who", "subject": "alien", "refs": ["[b]"]}, 7]}'
    )
    result = parse_extraction(content, refs)
    assert [(c.statement, c.subject, c.refs) for c in result.candidates] == [
        ("ok", Subject.OWNER, ("a",)),
        ("who", Subject.UNKNOWN, ("b",)),
    ]
    assert result.candidates[0].rejected_refs == ("zzz",)
    assert result.candidates[0].confidence == pytest.approx(0.9)
    assert len(result.problems) == 4
    assert parse_extraction("nope", refs).malformed
