"""Sleep-cycle overhead: gate, document assembly, scoring, policy and journal writes.

A store of 50,000 fragments over 7 days and 5,000 existing candidates; the
loopback Ollama server answers instantly. The cycle's own overhead is the run's
wall time minus the time spent inside LLM calls. Then the same kind of run with
each LLM call taking 1 s, to print the overhead's share of a realistic run.

    .venv/bin/python bench/bench_sleep.py [--fragments 50000] [--candidates 5000] [--slow-calls]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from persona_desktop.adapters.ollama_llm import OllamaLLM
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Subject, Trust
from persona_desktop.domain.text import statement_key
from persona_desktop.services.sleep_cycle import SleepConfig, SleepCycle, drain
from tests.ollama_server import OllamaServer, document_lines, reply, schema_keys


class TimedLLM:
    """Wraps the real adapter and adds up the time spent waiting for the model."""

    def __init__(self, inner: OllamaLLM) -> None:
        self.inner = inner
        self.host, self.model = inner.host, inner.model
        self.seconds = 0.0
        self.calls = 0

    def chat_json(self, messages: Sequence[dict[str, str]], schema: dict[str, Any]) -> str:
        start = time.perf_counter()
        try:
            return self.inner.chat_json(messages, schema)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1

    def list_models(self) -> list[str]:
        return self.inner.list_models()


def populate(rt: Runtime, n_fragments: int, n_candidates: int) -> None:
    now = datetime.now(UTC)
    per_source = 250
    with rt.uow() as uow:
        for s in range(n_fragments // per_source):
            chat = f"bench{s}"
            source_id = uow.sources.upsert(SourceInfo(f"chat:{chat}", Kind.CHAT, chat, {}))
            frags = []
            for i in range(per_source):
                k = s * per_source + i
                owner = k % 3 != 0
                frags.append(
                    NewFragment(
                        ref=f"chat:{chat}:{i}",
                        kind=Kind.CHAT,
                        author=Author.OWNER if owner else Author.OTHER,
                        trust=Trust.TRUSTED if owner else Trust.UNTRUSTED,
                        text=f"Message {k}: I like topic {k % 977} and I went to place {k % 311} today.",
                        captured_at=now
                        - timedelta(hours=2)
                        - timedelta(seconds=(k * 600_000) // n_fragments),
                        locator={"chat": chat, "message_id": i},
                        session=f"chat:{chat}",
                        seq=i,
                    )
                )
            uow.fragments.add_many(source_id, frags)
        first_ids = [f.id for f in uow.fragments.all(limit=n_candidates)]
        for c in range(n_candidates):
            statement = f"The owner likes existing topic {c}"
            cid = uow.candidates.add(
                statement=statement,
                subject=Subject.OWNER,
                key=statement_key(statement),
                category="profile",
                origin="sleep",
                run_id=None,
                payload={"confidence": 0.5},
                supersedes_fact_id=None,
                created_at=now - timedelta(days=1),
            )
            uow.candidates.add_evidence(cid, [first_ids[c % len(first_ids)]], None)
        uow.commit()
    # Phase 3 of a previous run already scored those.
    with rt.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE candidates SET scored = 1")
    # Everything older than the newest 24 documents was read by earlier runs.


def responder(body: dict[str, Any]) -> Any:
    if "candidates" in schema_keys(body):
        lines = document_lines(body)[:3]
        return {
            "candidates": [
                {
                    "statement": f"The owner likes topic {text.split('topic ')[1].split()[0]}",
                    "subject": "owner",
                    "refs": [ref],
                    "confidence": 0.8,
                }
                for ref, text in lines
            ]
        }
    return {"observation": "A week of many topics.", "themes": ["topics"]}


def one_run(rt: Runtime, server: OllamaServer, call_delay: float) -> tuple[float, TimedLLM, dict[str, Any]]:
    server.default = (lambda body: reply(responder(body), delay=call_delay)) if call_delay else responder
    llm = TimedLLM(OllamaLLM(server.url, "llama3.1:8b", timeout_s=60))
    cfg = SleepConfig.from_settings(rt.settings)
    cycle = SleepCycle(rt.uow, lambda: llm, cfg, rt.clock)
    start = time.perf_counter()
    outcome = drain(cycle.run())
    wall = time.perf_counter() - start
    assert outcome.status.value == "done", outcome
    return wall, llm, outcome.counters


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fragments", type=int, default=50_000)
    ap.add_argument("--candidates", type=int, default=5_000)
    ap.add_argument("--slow-calls", action="store_true", help="also run with 1 s per LLM call (about 25 s)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, OllamaServer() as server:
        rt = open_runtime(Path(tmp) / "data")
        rt.settings.set("sleep.enabled", True)
        rt.settings.set("sleep.quiet_minutes", 0)
        t0 = time.perf_counter()
        populate(rt, args.fragments, args.candidates)
        print(
            f"store: {args.fragments} fragments over 7 days, {args.candidates} candidates "
            f"(built in {time.perf_counter() - t0:.1f} s)"
        )
        wall, llm, counters = one_run(rt, server, 0.0)
        overhead = wall - llm.seconds
        print(
            f"run 1 (instant model): {counters['documents']} documents, {llm.calls} LLM calls, "
            f"wall {wall:.3f} s, in LLM {llm.seconds:.3f} s"
        )
        print(f"cycle overhead: {overhead:.3f} s  (target < 2 s)")
        share = overhead / (overhead + llm.calls * 1.0)
        print(f"overhead share with 1 s per LLM call (computed): {share * 100:.2f} %  (target < 5 %)")
        if args.slow_calls:
            wall, llm, counters = one_run(rt, server, 1.0)
            overhead = wall - llm.seconds
            print(
                f"run 2 (1 s per call, measured): {llm.calls} calls, wall {wall:.2f} s, overhead {overhead:.3f} s, "
                f"share {overhead / wall * 100:.2f} %"
            )
        print(json.dumps({"overhead_s": round(overhead, 3), "share": round(share, 4)}))
        rt.close()


if __name__ == "__main__":
    main()
