"""Typed proposals at the store boundary: every kind round-trips; old payload dicts still read."""

from __future__ import annotations

import json

import pytest

from persona_desktop.domain.proposals import (
    FactUpdate,
    Forget,
    NewFact,
    NewSkill,
    Proposal,
    SkillPatch,
    Via,
    candidate_key,
    from_payload,
    to_payload,
)

VIA = Via(document="d1", cited_refs=("chat:saved:1",), confidence=0.8, raw={"statement": "x"})


@pytest.mark.parametrize(
    "proposal",
    [
        NewFact(VIA),
        FactUpdate(3, VIA),
        Forget(4, "moved away", Via(conversation="c", tool="propose_forget", cited_owner=False)),
        NewSkill("brew-tea", "# Brew tea\n1. Boil water"),
        SkillPatch("brew-tea", "Boil", "Heat"),
    ],
)
def test_every_kind_round_trips_through_strict_json(proposal: Proposal) -> None:
    stored = json.loads(json.dumps(to_payload(proposal), allow_nan=False))
    assert from_payload(stored) == proposal


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"confidence": 0.9, "category": "x", "updates_fact": None, "raw": {"a": 1}},
            NewFact(Via(confidence=0.9, raw={"a": 1})),
        ),
        ({"confidence": 0.9, "updates_fact": 7}, FactUpdate(7, Via(confidence=0.9))),
        (
            {
                "conversation": "c1",
                "tool": "propose_fact",
                "cited_refs": ["r"],
                "evidence": "snapshot",
                "action": "add",
            },
            NewFact(Via(conversation="c1", tool="propose_fact", cited_refs=("r",), cited_owner=False)),
        ),
        ({"action": "update", "fact_id": 2, "updates_fact": 2}, FactUpdate(2)),
        ({"action": "forget", "fact_id": 5, "reason": "quit"}, Forget(5, "quit")),
        ({"kind": "skill", "action": "create", "name": "n", "content": "c"}, NewSkill("n", "c")),
        (
            {"kind": "skill", "action": "patch", "name": "n", "old": "a", "new": "b"},
            SkillPatch("n", "a", "b"),
        ),
    ],
)
def test_payloads_written_before_typing_still_read(payload: dict, expected: Proposal) -> None:
    assert from_payload(payload) == expected


@pytest.mark.parametrize(
    "payload",
    [
        None,
        [],
        {"proposal": "forget"},
        {"proposal": "nonsense", "via": 3},
        {"confidence": float("nan")},
        {"confidence": True},
    ],
)
def test_an_unreadable_payload_is_a_plain_fact_never_an_error(payload: object) -> None:
    parsed = from_payload(payload)  # type: ignore[arg-type]
    assert isinstance(parsed, NewFact) and parsed.via.confidence is None


def test_keys_recognize_the_same_proposal_again() -> None:
    assert candidate_key("I  like Tea.", NewFact()) == candidate_key("i like tea", FactUpdate(1))
    assert candidate_key("Forget: x", Forget(9, "a")) == "forget:9"
    assert candidate_key("", SkillPatch("n", "a", "b")) != candidate_key("", SkillPatch("n", "a", "c"))
