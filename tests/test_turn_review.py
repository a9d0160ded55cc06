"""The turn review: when it fires, what its tools may do, how it stops, where proposals land."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import CandidateStatus, FactStatus
from persona_desktop.errors import StateError
from persona_desktop.services import review
from persona_desktop.services.turn_review import ReviewConfig, ReviewKind, TurnCounter, make_snapshot
from tests.chat_support import add_fact, by_kind, reviewer, say, session, use_server
from tests.conftest import Cli
from tests.ollama_server import OllamaServer, reply


def _snapshot(rt: Runtime, server: OllamaServer, *lines: str):  # type: ignore[no-untyped-def]
    for _ in lines:
        server.reply("Got it.")
    s = session(rt, server)
    for line in lines:
        say(s, line)
    return s, make_snapshot(s.id, s.system_prompt(), s.conversation.messages)


def _journal(rt: Runtime, action: str) -> list[dict]:  # type: ignore[type-arg]
    with rt.uow.read() as uow:
        return [r.data for r in uow.journal.all() if r.action == action]


def test_counters_fire_on_the_configured_turn_and_reset_on_remember() -> None:
    counter = TurnCounter(
        ReviewConfig(memory_interval=3, skill_interval=2, allowed_toolsets=("memory", "skills"))
    )
    kinds = [counter.owner_turn(t) for t in ("a", "b", "c", "d")]
    assert kinds == [None, ReviewKind.SKILL, ReviewKind.MEMORY, ReviewKind.SKILL]
    assert counter.owner_turn("please remember that I am vegetarian") is ReviewKind.MEMORY
    assert counter.memory_turns == 0
    assert [counter.owner_turn(t) for t in ("e", "f")] == [ReviewKind.SKILL, None]
    # no skill reviews unless the skills tool set is allowed
    memory_only = TurnCounter(ReviewConfig(memory_interval=2, skill_interval=1))
    assert [memory_only.owner_turn(t) for t in ("a", "b")] == [None, ReviewKind.MEMORY]
    # and no memory reviews when only skills are allowed
    skills_only = TurnCounter(ReviewConfig(memory_interval=1, skill_interval=2, allowed_toolsets=("skills",)))
    assert [skills_only.owner_turn(t) for t in ("remember this", "b")] == [None, ReviewKind.SKILL]


def test_terminal_chat_fires_the_review_on_the_configured_turn(
    runtime: Runtime, ollama_server: OllamaServer, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_server(runtime, ollama_server, review__enabled=True, review__memory_interval=3)
    ollama_server.default = by_kind("Okay.")
    monkeypatch.setattr("sys.stdin", io.StringIO("one\ntwo\nI work as a nurse\nfour\n/quit\nnot read\n"))
    result = cli("chat")
    assert result.code == 0, result.err
    assert result.out == "Okay.\n" * 4
    paths = ["tools" if b.get("tools") else "chat" for b in ollama_server.chat_bodies()]
    assert paths.count("tools") == 1
    assert paths.index("tools") >= 3  # fired after the third owner turn, not before
    review_body = next(b for b in ollama_server.chat_bodies() if b.get("tools"))
    listing = review_body["messages"][-1]["content"]
    assert "I work as a nurse" in listing and "four" not in listing  # a snapshot at the third turn
    assert review_body["messages"][0]["content"] == ollama_server.chat_bodies()[0]["messages"][0]["content"]


def test_a_whitelisted_proposal_lands_pending_with_its_evidence(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    s, snap = _snapshot(runtime, ollama_server, "My sister Kate lives in Lisbon", "what time is it?")
    owner_ref = s.conversation.messages[0].ref
    assistant_ref = s.conversation.messages[1].ref
    ollama_server.reply(
        "",
        tool_calls=[
            (
                "propose_fact",
                {
                    "statement": "Kate, the owner's sister, lives in Lisbon",
                    "subject": "other",
                    "refs": [owner_ref, assistant_ref],
                },
            )
        ],
    )
    ollama_server.reply("Done.")
    outcome = reviewer(runtime, ollama_server).run(snap, ReviewKind.MEMORY)
    assert outcome.status == "done" and outcome.iterations == 2
    assert outcome.summary() == "Memory review: 1 fact proposed"
    [cid] = outcome.candidate_ids
    with runtime.uow.read() as uow:
        cand = uow.candidates.get(cid)
        evidence = [f.ref for f in uow.candidates.evidence(cid)]
    assert cand is not None
    assert (cand.origin, cand.status, cand.subject.value) == ("review", CandidateStatus.PENDING, "other")
    assert "about other, not the owner" in (cand.reason or "")
    assert evidence == [owner_ref]  # the assistant's message is never evidence
    tool_msg = ollama_server.chat_bodies()[-1]["messages"][-1]
    assert tool_msg["role"] == "tool" and f"candidate {cid}" in tool_msg["content"]
    # the tools offered were the memory tool set only
    names = [t["function"]["name"] for t in ollama_server.chat_bodies()[-2]["tools"]]
    assert names == ["propose_fact", "propose_fact_update", "propose_forget"]


def test_a_tool_outside_the_whitelist_is_refused_told_and_journaled(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    _, snap = _snapshot(runtime, ollama_server, "Always answer me in French")
    ollama_server.reply(
        "",
        tool_calls=[
            ("propose_skill", {"name": "french", "content": "# Answer in French"}),
            ("write_memory", {"text": "owner speaks French"}),
        ],
    )
    ollama_server.reply("Understood.")
    outcome = reviewer(runtime, ollama_server).run(snap, ReviewKind.COMBINED)  # skills not allowed
    assert outcome.refused == ["propose_skill", "write_memory"]
    assert outcome.candidate_ids == [] and outcome.summary() == ""
    sent_back = [m for m in ollama_server.chat_bodies()[-1]["messages"] if m["role"] == "tool"]
    assert len(sent_back) == 2 and all(m["content"].startswith("Refused") for m in sent_back)
    refused = _journal(runtime, "review.tool_refused")
    assert [r["tool"] for r in refused] == ["propose_skill", "write_memory"]
    with runtime.uow.read() as uow:
        assert uow.candidates.count() == 0 and uow.skills.all() == []


def test_max_iterations_stops_a_looping_reviewer(runtime: Runtime, ollama_server: OllamaServer) -> None:
    s, snap = _snapshot(runtime, ollama_server, "I like chess")
    ref = s.conversation.messages[0].ref
    ollama_server.default = reply(
        "", tool_calls=[("propose_fact", {"statement": "The owner likes chess", "refs": [ref]})]
    )
    before = len(ollama_server.chat_bodies())
    outcome = reviewer(runtime, ollama_server, max_iterations=3).run(snap, ReviewKind.MEMORY)
    assert outcome.status == "stopped" and outcome.iterations == 3
    assert len(ollama_server.chat_bodies()) - before == 3
    with runtime.uow.read() as uow:
        assert uow.candidates.count() == 1  # the same statement again adds to one candidate
    assert outcome.summary() == "Memory review: 1 fact proposed"
    assert _journal(runtime, "review.finished")[-1]["status"] == "stopped"


def test_a_review_past_its_budget_is_cancelled(runtime: Runtime, ollama_server: OllamaServer) -> None:
    _, snap = _snapshot(runtime, ollama_server, "I like chess")
    ticks = iter([0.0, 1.0, 500.0, 1000.0])
    ollama_server.default = reply("", tool_calls=[("nothing", {})])
    r = reviewer(runtime, ollama_server, timeout_s=60.0)
    r._monotonic = lambda: next(ticks)  # type: ignore[method-assign]
    outcome = r.run(snap, ReviewKind.MEMORY)
    assert outcome.status == "timeout" and outcome.iterations == 1


def test_an_unreadable_prompt_override_falls_back_with_a_warning(
    runtime: Runtime, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    _, snap = _snapshot(runtime, ollama_server, "hello")
    missing = tmp_path / "nope.md"
    runtime.settings.set("review.memory_prompt_path", str(missing))
    ollama_server.reply("Nothing to save.")
    outcome = reviewer(runtime, ollama_server).run(snap, ReviewKind.MEMORY)
    assert len(outcome.warnings) == 1 and str(missing) in outcome.warnings[0]
    assert "built-in memory prompt" in outcome.warnings[0]
    assert "You cannot write memory" in ollama_server.chat_bodies()[-1]["messages"][-1]["content"]
    assert _journal(runtime, "review.started")[-1]["warnings"] == outcome.warnings

    own = tmp_path / "own.md"
    own.write_text("MY OWN REVIEW PROMPT", encoding="utf-8")
    runtime.settings.set("review.memory_prompt_path", str(own))
    ollama_server.reply("Nothing to save.")
    outcome = reviewer(runtime, ollama_server).run(snap, ReviewKind.MEMORY)
    assert outcome.warnings == []
    assert ollama_server.chat_bodies()[-1]["messages"][-1]["content"].startswith("MY OWN REVIEW PROMPT")


def test_updates_forgets_and_skills_wait_for_approval_and_apply_on_it(
    runtime: Runtime, ollama_server: OllamaServer, cli: Cli
) -> None:
    tea = add_fact(runtime, "The owner drinks green tea")
    city = add_fact(runtime, "The owner lives in Oslo", "home")
    s, snap = _snapshot(
        runtime, ollama_server, "I moved to Bergen last month", "and I quit tea, forget that one"
    )
    moved, quit_tea = (m.ref for m in s.conversation.messages if m.role == "owner")
    ollama_server.reply(
        "",
        tool_calls=[
            (
                "propose_fact_update",
                {"fact_id": city, "statement": "The owner lives in Bergen", "refs": [moved]},
            ),
            ("propose_forget", {"fact_id": tea, "reason": "the owner quit tea", "refs": [quit_tea]}),
            ("propose_forget", {"fact_id": 999, "reason": "no such fact"}),
            (
                "propose_skill",
                {"name": "Moving checklist", "content": "# Moving checklist\n\n1. Change the address"},
            ),
        ],
    )
    ollama_server.reply("Done.")
    outcome = reviewer(runtime, ollama_server, allowed_toolsets=("memory", "skills")).run(
        snap, ReviewKind.COMBINED
    )
    assert outcome.summary() == "Review: 1 fact update proposed, 1 forget proposed, 1 skill proposed"
    update, forget, skill = outcome.candidate_ids
    with runtime.uow.read() as uow:
        statuses = [uow.candidates.get(c).status for c in outcome.candidate_ids]  # type: ignore[union-attr]
        assert {f.id for f in uow.facts.all(FactStatus.APPLIED)} == {tea, city}
        assert uow.skills.all() == []
    assert statuses == [CandidateStatus.PENDING] * 3
    assert "not a current fact" in _journal(runtime, "review.proposal_refused")[0]["reason"]

    now = datetime.now(UTC)
    with pytest.raises(StateError, match="approve or reject it as it is"):
        review.approve(runtime.uow, skill, now, "New skill: something else entirely")
    new_city = review.approve(runtime.uow, update, now)
    review.approve(runtime.uow, forget, now)
    review.approve(runtime.uow, skill, now)
    with runtime.uow.read() as uow:
        assert uow.facts.get(city).status is FactStatus.SUPERSEDED  # type: ignore[union-attr]
        assert uow.facts.get(new_city).statement == "The owner lives in Bergen"  # type: ignore[union-attr]
        assert uow.facts.get(tea).status is FactStatus.REVERTED  # type: ignore[union-attr]
        [written] = uow.skills.all()
    assert written.name == "moving-checklist" and "Change the address" in written.content
    listed = cli("skills")
    assert listed.code == 0 and listed.out.startswith("moving-checklist") and "Moving checklist" in listed.out
    assert cli("skills", "show", "moving-checklist").out == written.content
    assert cli("skills", "show").code == 1 and cli("skills", "show", "nope").code == 1

    # undo walks back: the skill goes, the forgotten fact returns
    assert "skill moving-checklist" in review.undo(runtime.uow, now)
    assert "remembered again" in review.undo(runtime.uow, now)
    with runtime.uow.read() as uow:
        assert uow.skills.all() == []
        assert uow.facts.get(tea).status is FactStatus.APPLIED  # type: ignore[union-attr]
        assert uow.candidates.get(skill).status is CandidateStatus.PENDING  # type: ignore[union-attr]


def test_a_skill_patch_applies_on_approval_and_undo_restores_the_old_text(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    now = datetime.now(UTC)
    with runtime.uow() as uow:
        uow.skills.add("weekly-report", "# Weekly report\n\nSend it on Friday.\n", now)
        uow.commit()
    _, snap = _snapshot(runtime, ollama_server, "Send my weekly report on Thursdays from now on")
    ollama_server.reply(
        "",
        tool_calls=[
            (
                "propose_skill_patch",
                {"name": "weekly-report", "old_text": "on Friday", "new_text": "on Thursday"},
            ),
            ("propose_skill_patch", {"name": "weekly-report", "old_text": "on Monday", "new_text": "x"}),
        ],
    )
    ollama_server.reply("Done.")
    outcome = reviewer(runtime, ollama_server, allowed_toolsets=("skills",)).run(snap, ReviewKind.SKILL)
    assert outcome.summary() == "Skill review: 1 skill patch proposed"
    with runtime.uow.read() as uow:
        proposed = uow.candidates.get(outcome.candidate_ids[0])
    assert proposed is not None
    assert (
        proposed.statement
        == "Patch skill weekly-report: replace \u201con Friday\u201d with \u201con Thursday\u201d"
    )
    sent_back = [m["content"] for m in ollama_server.chat_bodies()[-1]["messages"] if m["role"] == "tool"]
    assert "no longer fits" in sent_back[1]
    review.approve(runtime.uow, outcome.candidate_ids[0], now)
    with runtime.uow.read() as uow:
        assert "Send it on Thursday." in uow.skills.by_name("weekly-report").content  # type: ignore[union-attr]
    review.undo(runtime.uow, now)
    with runtime.uow.read() as uow:
        assert "Send it on Friday." in uow.skills.by_name("weekly-report").content  # type: ignore[union-attr]


def test_review_run_reviews_the_latest_conversation_and_a_failure_is_clear(
    runtime: Runtime, ollama_server: OllamaServer, cli: Cli
) -> None:
    use_server(runtime, ollama_server)
    assert cli("review", "run").code == 1  # no conversation yet: a one-line error
    s, _ = _snapshot(runtime, ollama_server, "I am allergic to peanuts")
    ref = s.conversation.messages[0].ref
    ollama_server.reply(
        "", tool_calls=[("propose_fact", {"statement": "The owner is allergic to peanuts", "refs": [ref]})]
    )
    ollama_server.reply("Saved for review.")
    result = cli("review", "run")
    assert result.code == 0, result.err
    assert result.out.strip() == "Memory review: 1 fact proposed"
    listed = cli("candidates", "--json").json()
    assert [(c["origin"], c["status"], c["refs"]) for c in listed] == [("review", "pending", [ref])]
    assert "below threshold" in listed[0]["reason"]  # the sleep cycle's policy decided

    ollama_server.fail(500, "out of memory")
    failed = cli("review", "run", "--json")
    assert failed.code == 2
    assert "out of memory" in failed.json()["error"]


def test_the_policy_applies_a_well_cited_owner_fact_but_never_an_uncited_one(
    runtime: Runtime, ollama_server: OllamaServer
) -> None:
    s, snap = _snapshot(
        runtime,
        ollama_server,
        "I am a nurse",
        "I work nights at the hospital as a nurse",
        "it is tiring",
        "nurse life",
    )
    owner = [m.ref for m in s.conversation.messages if m.role == "owner"]
    ollama_server.reply(
        "",
        tool_calls=[
            (
                "propose_fact",
                {"statement": "The owner works as a nurse", "refs": owner[:2], "category": "work"},
            ),
            ("propose_fact", {"statement": "The owner works night shifts", "refs": []}),
        ],
    )
    ollama_server.reply("Done.")
    outcome = reviewer(runtime, ollama_server).run(snap, ReviewKind.MEMORY)
    assert outcome.summary() == "Memory review: 2 facts proposed, 1 applied by the policy"
    nurse, nights = outcome.candidate_ids
    with runtime.uow.read() as uow:
        applied, held = uow.candidates.get(nurse), uow.candidates.get(nights)
        fact = uow.facts.by_candidate(nurse)
        held_evidence = uow.candidates.evidence(nights)
    assert applied is not None and applied.status is CandidateStatus.APPLIED
    assert (
        fact is not None
        and fact.status is FactStatus.APPLIED
        and fact.statement == "The owner works as a nurse"
    )
    # the whole conversation stood in as evidence: over the threshold, yet it waits for the owner
    assert held is not None and held.status is CandidateStatus.PENDING and (held.score or 0) > 0.6
    assert held.reason == "the review cited none of your messages; waits for your approval"
    assert len(held_evidence) == 4
