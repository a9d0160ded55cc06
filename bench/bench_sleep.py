"""Sleep-cycle overhead: gate, reading plan, scoring, policy and journal writes, vs the store's size.

Two stores are built in the same run: a small one (50,000 fragments) and the one asked
for (`--fragments`, default 1,000,000), both with `--candidates` scored candidates and a
journal of ~2 entries per candidate. Fragments span 7 days. In the steady state every
fragment was read by earlier runs except the newest `--new` (about one run's budget:
the new work). The cycle's own overhead is the run's wall time minus the time spent
inside LLM calls (the loopback Ollama server answers at once); it must depend on the
new work, not on the store's size (issue 11: under 1 s at a million).

Then, on the big store: the same run with every fragment unread (a fresh import of the
whole store: a run still reads one budget, newest first), and `journal verify`.

Every store is built twice, plaintext and encrypted (SQLCipher); their runs alternate
(plaintext first in one repeat, encrypted first in the next) and each figure is printed
for both, with the ratio (issue 13: encryption costs at most 15 %).

    .venv/bin/python bench/bench_sleep.py [--fragments 1000000] [--candidates 50000] [--new 1440] [--repeats 3]
        [--modes plaintext,encrypted]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.store_modes import MODES, data_dir_for, headless_keys, ratio_line
from persona_desktop.adapters.ollama_llm import OllamaLLM
from persona_desktop.adapters.store.tables import utc_text
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.domain.text import statement_key
from persona_desktop.service_configs import sleep_config
from persona_desktop.services.journal_integrity import verify_journal
from persona_desktop.services.sleep_cycle import SleepCycle, drain
from tests.ollama_server import OllamaServer, document_lines, reply, schema_keys

SMALL = 50_000


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
                        - timedelta(seconds=((n_fragments - k) * 600_000) // n_fragments),
                        locator={"chat": chat, "message_id": i},
                        session=f"chat:{chat}",
                        seq=i,
                    )
                )
            uow.fragments.add_many(source_id, frags)
            uow.journal.append(
                at=now,
                actor="capture",
                action="fragments.ingested",
                entity="source",
                entity_id=source_id,
                data={"source": f"chat:{chat}", "kind": "chat", "added": per_source, "skipped": 0},
            )
        first_ids = [f.id for f in uow.fragments.all(limit=n_candidates)]
        uow.commit()
    # Candidates of earlier runs, inserted in bulk (the store's own `add` takes ~1 ms each).
    created = utc_text(now - timedelta(days=1))
    with rt.engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO candidates (id, origin, statement, subject, key, category, status, score, signals, "
            "payload, scored, created_at) VALUES (?, 'sleep', ?, 'owner', ?, 'profile', 'pending', 0.41, "
            "'{}', '{\"confidence\": 0.5}', 1, ?)",
            [
                (
                    c + 1,
                    f"The owner likes existing topic {c}",
                    statement_key(f"The owner likes existing topic {c}"),
                    created,
                )
                for c in range(n_candidates)
            ],
        )
        conn.exec_driver_sql(
            "INSERT INTO evidence (candidate_id, fragment_id) VALUES (?, ?)",
            [(c + 1, first_ids[c % len(first_ids)]) for c in range(n_candidates)],
        )
    with rt.uow() as uow:  # their journal entries, through the real (hash-chained) append
        for c in range(n_candidates):
            for action in ("candidate.proposed", "candidate.pending"):
                uow.journal.append(
                    at=now,
                    actor="sleep",
                    action=action,
                    entity="candidate",
                    entity_id=c + 1,
                    data={"statement": f"The owner likes existing topic {c}", "score": 0.41},
                )
        uow.commit()


def set_unread(rt: Runtime, newest: int | None) -> None:
    """Everything read by earlier runs except the newest `newest` fragments (None: nothing read,
    nothing extracted: as if the whole store had just been imported)."""
    with rt.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE fragments SET read_run_id = NULL")
        if newest is None:
            conn.exec_driver_sql("DELETE FROM extracted_documents")
        if newest is not None:
            conn.exec_driver_sql(
                "UPDATE fragments SET read_run_id = 0 WHERE id NOT IN "
                "(SELECT id FROM fragments ORDER BY captured_at DESC, id DESC LIMIT ?)",
                (newest,),
            )
        conn.exec_driver_sql("DELETE FROM key_values WHERE key LIKE 'sleep.history_%'")


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


def one_run_timed(rt: Runtime, server: OllamaServer) -> tuple[float, float, TimedLLM, dict[str, Any]]:
    """Wall time, this thread's CPU time (what the cycle itself costs, whatever else the shared
    machine runs: the model's server threads and LLM waits use none of it), the LLM, the counters."""
    cpu0 = time.thread_time()
    wall, llm, counters = one_run(rt, server)
    return wall, time.thread_time() - cpu0, llm, counters


def one_run(
    rt: Runtime, server: OllamaServer, call_delay: float = 0.0
) -> tuple[float, TimedLLM, dict[str, Any]]:
    server.default = (lambda body: reply(responder(body), delay=call_delay)) if call_delay else responder
    llm = TimedLLM(OllamaLLM(server.url, "llama3.1:8b", timeout_s=60))
    cycle = SleepCycle(rt.uow, lambda: llm, sleep_config(rt.settings.values), rt.clock)
    start = time.perf_counter()
    outcome = drain(cycle.run())
    wall = time.perf_counter() - start
    assert outcome.status.value == "done", outcome
    return wall, llm, outcome.counters


def build(tmp: str, name: str, fragments: int, candidates: int, mode: str) -> Path:
    """A store built once and kept closed; each measured run starts from a fresh copy of it."""
    pristine = data_dir_for(Path(tmp) / name, mode)
    rt = open_runtime(pristine)
    t0 = time.perf_counter()
    populate(rt, fragments, candidates)
    with rt.engine.begin() as conn:
        journal = conn.exec_driver_sql("SELECT count(*) FROM revisions").scalar_one()
    rt.close()
    print(
        f"store {name} ({mode}): {fragments:,} fragments over 7 days, {candidates:,} candidates, "
        f"{journal:,} journal entries, built in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return pristine


def run_copy(
    pristine: Path, server: OllamaServer, new: int | None
) -> tuple[float, float, TimedLLM, dict[str, Any]]:
    """One run on a fresh copy of the store: overhead, cycle CPU, the LLM, the counters."""
    work = pristine.with_name(pristine.name + "-run")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work)
    rt = open_runtime(work)
    try:
        rt.settings.set("sleep.enabled", True)
        rt.settings.set("sleep.quiet_minutes", 0)
        set_unread(rt, new)
        wall, cpu, llm, counters = one_run_timed(rt, server)
    finally:
        rt.close()
        shutil.rmtree(work, ignore_errors=True)
    return wall - llm.seconds, cpu, llm, counters


def measure(
    stores: dict[str, Path], server: OllamaServer, label: str, new: int | None, repeats: int
) -> dict[str, float]:
    """Per mode, the median overhead of `repeats` runs, modes alternating (the machine is shared)."""
    overheads: dict[str, list[float]] = {m: [] for m in stores}
    cpus: dict[str, list[float]] = {m: [] for m in stores}
    last: dict[str, tuple[TimedLLM, dict[str, Any]]] = {}
    for r in range(repeats):
        for mode in stores if r % 2 == 0 else reversed(list(stores)):
            overhead, cpu, llm, counters = run_copy(stores[mode], server, new)
            overheads[mode].append(overhead)
            cpus[mode].append(cpu)
            last[mode] = (llm, counters)
    result: dict[str, float] = {}
    for mode in stores:
        llm, counters = last[mode]
        result[mode] = statistics.median(overheads[mode])
        result[f"{mode}_cpu"] = statistics.median(cpus[mode])
        print(
            f"  [{mode}] {label}: {counters['documents']} documents ({counters['fragments_read']} fragments) "
            f"read, {llm.calls} LLM calls, in LLM {llm.seconds:.3f} s -> cycle overhead {result[mode]:.3f} s "
            f"(median of {', '.join(f'{o:.3f}' for o in overheads[mode])}); cycle CPU {result[f'{mode}_cpu']:.3f} s",
            flush=True,
        )
    if len(stores) == 2:
        print("  " + ratio_line(f"{label}, overhead", result["plaintext"], result["encrypted"], "s"))
        print("  " + ratio_line(f"{label}, CPU", result["plaintext_cpu"], result["encrypted_cpu"], "s"))
    return result


def verify_time(pristine: Path) -> tuple[float, int, str]:
    rt = open_runtime(pristine)
    try:
        t0 = time.perf_counter()
        check = verify_journal(rt.uow)
        return time.perf_counter() - t0, check.entries, check.message
    finally:
        rt.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fragments", type=int, default=1_000_000)
    ap.add_argument("--candidates", type=int, default=50_000)
    ap.add_argument(
        "--new", type=int, default=1440, help="unread fragments in the steady state (the new work)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES), help="plaintext, encrypted, or both (the default)")
    args = ap.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    headless_keys()
    candidates = min(args.candidates, SMALL)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp, OllamaServer() as server:
        small = {m: build(tmp, f"small-{m}", SMALL, candidates, m) for m in modes}
        small_overhead = measure(
            small, server, f"{SMALL:,} fragments, {args.new:,} new", args.new, args.repeats
        )
        for path in small.values():
            shutil.rmtree(path)
        big = {m: build(tmp, f"big-{m}", args.fragments, args.candidates, m) for m in modes}
        big_overhead = measure(
            big, server, f"{args.fragments:,} fragments, {args.new:,} new", args.new, args.repeats
        )
        backlog_overhead = measure(
            big, server, f"{args.fragments:,} fragments, all unread", None, args.repeats
        )
        for mode in modes:
            print(
                f"[{mode}] cycle overhead: {small_overhead[mode]:.3f} s at {SMALL:,} fragments, "
                f"{big_overhead[mode]:.3f} s at {args.fragments:,} (ratio "
                f"{big_overhead[mode] / small_overhead[mode]:.2f}; target < 1 s), "
                f"{backlog_overhead[mode]:.3f} s with all {args.fragments:,} unread"
            )
            share = big_overhead[mode] / (big_overhead[mode] + 25 * 1.0)
            print(
                f"[{mode}] overhead share with 1 s per LLM call (computed, 25 calls): {share * 100:.2f} %  "
                "(target < 5 %)"
            )
            verify_s, entries, message = verify_time(big[mode])
            print(f"[{mode}] journal verify: {entries:,} entries in {verify_s:.2f} s ({message})")
            figures[mode] = {
                "overhead_small_s": round(small_overhead[mode], 3),
                "overhead_big_s": round(big_overhead[mode], 3),
                "overhead_all_unread_s": round(backlog_overhead[mode], 3),
                "cpu_big_s": round(big_overhead[f"{mode}_cpu"], 3),
                "journal_verify_s": round(verify_s, 2),
                "journal_entries": entries,
            }
        if len(modes) == 2:
            figures["ratio_big"] = round(big_overhead["encrypted"] / big_overhead["plaintext"], 3)
            figures["cpu_ratio_big"] = round(big_overhead["encrypted_cpu"] / big_overhead["plaintext_cpu"], 3)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
