"""Search and recall, measured.

Search: a store of 1,000,000 fragments (chat, screen and speech lines over 90 days, words
drawn from a Zipf-distributed vocabulary of 30,000 words, like text), inserted through the
real store so the triggers build the index. 300 queries like people type them (one to
three words drawn by corpus frequency, the 100 most common left out as people leave them
out; some phrases, prefixes, kind and date filters) through the same `search()` the CLI
and the window call. Prints p50/p95/max and the index size per million fragments.

Recall: 2,000 facts with the owner's words as evidence and 100 questions worded unlike the
fact they need (bench/recall_fixture.py). Prints the share of questions whose fact is in
the prompt with a 1,500-token budget, for recall and for "newest N" (the prompt before:
the newest facts, within the same budget, and the old fixed 200).

    .venv/bin/python bench/bench_search.py [--fragments 1000000] [--only search|recall]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.recall_fixture import build
from bench.store_modes import headless_keys
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.domain.model import Author, FactStatus, Kind, NewFragment, SourceInfo, Subject, Trust
from persona_desktop.domain.proposals import NewFact
from persona_desktop.domain.text import statement_key
from persona_desktop.services.recall import RecallConfig, recall
from persona_desktop.services.search import search

VOCAB = 30_000
SKIP_COMMON = 100
KINDS = [
    (Kind.CHAT, Author.OWNER, Trust.TRUSTED),
    (Kind.SCREEN, Author.UNKNOWN, Trust.UNTRUSTED),
    (Kind.SPEECH, Author.UNKNOWN, Trust.UNTRUSTED),
]


def vocabulary(r: random.Random) -> list[str]:
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < VOCAB:
        n = r.choice((1, 2, 2, 3, 3, 4))
        w = "".join(r.choice(consonants) + r.choice(vowels) for _ in range(n)) + r.choice(("", "n", "s", "t"))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def zipf_cumulative(n: int) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + 1) for rank in range(n)))


def populate(rt: Runtime, n: int, words: list[str], r: random.Random, sample: list[str]) -> float:
    """Store n fragments; every 997th text goes to `sample` (what queries are drawn from)."""
    cum = zipf_cumulative(len(words))
    start_at = datetime.now(UTC) - timedelta(days=90)
    step = timedelta(days=90) / max(1, n)
    per_source = 1000
    started = time.perf_counter()
    done = 0
    for s in range(0, n, per_source):
        kind, author, trust = KINDS[(s // per_source) % 3]
        key = f"{kind.value}:bench{s}"
        count = min(per_source, n - s)
        texts = [" ".join(r.choices(words, cum_weights=cum, k=r.randint(4, 14))) for _ in range(count)]
        sample.extend(texts[::997])
        frags = [
            NewFragment(f"{key}:{i}", kind, author, trust, t, start_at + step * (s + i), {"line": i}, key, i)
            for i, t in enumerate(texts)
        ]
        with rt.uow() as uow:
            sid = uow.sources.upsert(SourceInfo(key, kind, key, {}))
            uow.fragments.add_many(sid, frags)
            uow.commit()
        done += count
        if done % 100_000 == 0:
            print(f"  {done:,} fragments stored ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return time.perf_counter() - started


def reuse_store(rt: Runtime, words: list[str], r: random.Random, sample: list[str]) -> float:
    """A store kept by --keep from an earlier run: the same sample of its lines, nothing stored."""
    with rt.engine.connect() as conn:
        sample.extend(t for (t,) in conn.exec_driver_sql("SELECT text FROM fragments WHERE id % 997 = 1"))
    return float("nan")


def queries(
    words: list[str], sample: list[str], r: random.Random, count: int
) -> list[tuple[str, str | None, datetime | None]]:
    """What someone looks for: one to three words of a line they saw, rarely the commonest words."""
    common = set(words[:SKIP_COMMON])
    out: list[tuple[str, str | None, datetime | None]] = []
    for i in range(count):
        seen = sample[r.randrange(len(sample))].split()
        content = [w for w in seen if w not in common] or seen
        k = min(len(content), r.choices((1, 2, 3), (0.45, 0.4, 0.15))[0])
        if i % 20 == 0 and len(seen) > 1:  # a phrase: two words next to each other
            at = r.randrange(len(seen) - 1)
            text = f'"{seen[at]} {seen[at + 1]}"'
        elif i % 20 == 1:
            text = content[0][:3] + "*"
        else:
            text = " ".join(r.sample(content, k))
        kind = r.choice(("chat", "screen", "speech", "fact")) if i % 5 == 0 else None
        since = datetime.now(UTC) - timedelta(days=r.choice((7, 30))) if i % 7 == 0 else None
        out.append((text, kind, since))
    return out


def index_bytes(rt: Runtime) -> int:
    with rt.engine.connect() as conn:
        total = 0
        for table, col in (
            ("fragments_fts_data", "block"),
            ("fragments_fts_idx", "term"),
            ("fragments_fts_docsize", "sz"),
        ):
            total += int(
                conn.exec_driver_sql(f"SELECT coalesce(sum(length({col})), 0) FROM {table}").scalar() or 0
            )
        rows = int(conn.exec_driver_sql("SELECT count(*) FROM fragments_fts_docsize").scalar() or 0)
        return total + rows * 8  # + the rowid of each docsize row


def bench_search(n: int, keep: Path | None = None) -> None:
    r = random.Random(14)
    words = vocabulary(r)
    with tempfile.TemporaryDirectory() as tmp:
        data = keep or Path(tmp) / "data"
        reuse = (data / "persona.sqlite3").exists()
        rt = open_runtime(data)
        try:
            sample: list[str] = []
            took = reuse_store(rt, words, r, sample) if reuse else populate(rt, n, words, r, sample)
            size = index_bytes(rt)
            db_size = (data / "persona.sqlite3").stat().st_size
            qs = queries(words, sample, r, 300)
            for text, kind, since in qs[:20]:  # warm the page cache, as a running app has it
                search(rt.uow, text, kind, since)
            times, cpu, hits = [], [], []
            for text, kind, since in qs:
                t0, c0 = time.perf_counter(), time.process_time()
                found = search(rt.uow, text, kind, since)
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
                hits.append(len(found))
            forgets = forget_sources(rt, 3)
        finally:
            rt.close()
    times.sort()
    cpu.sort()
    p95 = times[int(0.95 * len(times)) - 1]
    load = os.getloadavg()[0]
    if took == took:  # not NaN: this run built the store
        print(f"search: {n:,} fragments stored in {took:.0f} s ({n / took:,.0f}/s, index kept by triggers)")
    print(
        f"search: {len(times)} queries, p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
        f"max {times[-1]:.1f} ms (target p95 < 50 ms: {'met' if p95 < 50 else 'NOT met'}); "
        f"median hits {statistics.median(hits):.0f}"
    )
    print(
        f"search: the same in CPU time of this process: p50 {statistics.median(cpu):.1f} ms, "
        f"p95 {cpu[int(0.95 * len(cpu)) - 1]:.1f} ms (load average {load:.1f} on {os.cpu_count()} cores "
        "during the run: wall time includes waiting for a core)"
    )
    per_million = size * 1_000_000 / n
    print(
        f"search: index {size / 1e6:.0f} MB for {n:,} fragments = {per_million / 1e6:.0f} MB per million "
        f"(database file {db_size / 1e6:.0f} MB in all)"
    )
    print(
        f"search: forget a source ({forgets[0][2]:,} lines) on {n:,} fragments, the index merged so no "
        "deleted word stays on disk: "
        + ", ".join(f"{t:.2f} s ({c:.2f} s CPU)" for t, c, _ in forgets)
        + " (one after another)"
    )


def forget_sources(rt: Runtime, count: int) -> list[tuple[float, float, int]]:
    """Forget the `count` oldest sources one by one, as the owner would: wall and CPU seconds, lines."""
    from persona_desktop.services.review import forget_source

    with rt.uow.read() as uow:
        ids = [(sid, n) for sid, _, n in uow.sources.all()][:count]
    out = []
    for sid, lines in ids:
        t0, c0 = time.perf_counter(), time.process_time()
        forget_source(rt.uow, sid, datetime.now(UTC))
        out.append((time.perf_counter() - t0, time.process_time() - c0, lines))
    return out


def bench_recall(budget: int = 1500) -> None:
    facts, questions = build()
    with tempfile.TemporaryDirectory() as tmp:
        rt = open_runtime(Path(tmp) / "data")
        try:
            ids = seed_facts(rt, facts)
            config = RecallConfig(budget_tokens=budget)
            newest_budget = {r.fact.id for r in recall(rt.uow, "", config).facts}
            with rt.uow.read() as uow:
                newest_200 = {f.id for f in uow.facts.all(FactStatus.APPLIED)[-200:]}
            hit = in_newest = in_200 = 0
            t0 = time.perf_counter()
            carried = []
            for q in questions:
                got = recall(rt.uow, q.text, config)
                carried.append(len(got.facts))
                target = ids[q.fact_index]
                hit += target in {r.fact.id for r in got.facts}
                in_newest += target in newest_budget
                in_200 += target in newest_200
            per_q = (time.perf_counter() - t0) * 1000 / len(questions)
        finally:
            rt.close()
    n = len(questions)
    no_word = sum(1 for q in questions if not _shared(q.text, facts[q.fact_index].statement))
    neither = sum(
        1
        for q in questions
        if not _shared(q.text, facts[q.fact_index].statement + " " + facts[q.fact_index].evidence)
    )
    print(
        f"recall: fixture: {no_word} of {n} questions share no content word with their fact's statement, "
        f"{neither} share none with its evidence either"
    )
    print(
        f"recall: {len(facts):,} facts, {n} questions, budget {budget} tokens "
        f"({statistics.median(carried):.0f} facts fit), {per_q:.1f} ms per turn"
    )
    print(
        f"recall: needed fact in the prompt: recall {100 * hit / n:.0f} % (target >= 95 %), "
        f"newest-N within the budget {100 * in_newest / n:.0f} % ({len(newest_budget)} facts), "
        f"newest 200 (old fixed N, ~{200 * 16} tokens) {100 * in_200 / n:.0f} %"
    )


def _shared(question: str, text: str) -> set[str]:
    from persona_desktop.domain.search_query import recall_query, tokens

    return set(recall_query(question).words()) & set(tokens(text))


def seed_facts(rt: Runtime, facts: list) -> list[int]:  # type: ignore[type-arg]
    now = datetime.now(UTC)
    ids = []
    with rt.uow() as uow:
        sid = uow.sources.upsert(SourceInfo("chat:saved", Kind.CHAT, "Saved messages", {}))
        uow.fragments.add_many(
            sid,
            [
                NewFragment(
                    f"chat:saved:{i}",
                    Kind.CHAT,
                    Author.OWNER,
                    Trust.TRUSTED,
                    f.evidence,
                    now - timedelta(minutes=len(facts) - i),
                    {"message_id": i},
                    "chat:saved",
                    i,
                )
                for i, f in enumerate(facts)
            ],
        )
        by_ref = uow.fragments.by_refs([f"chat:saved:{i}" for i in range(len(facts))])
        for i, f in enumerate(facts):
            cid = uow.candidates.add(
                statement=f.statement,
                subject=Subject.OWNER,
                key=statement_key(f.statement),
                category=f.category,
                origin="bench",
                run_id=None,
                proposal=NewFact(),
                supersedes_fact_id=None,
                created_at=now,
            )
            uow.candidates.add_evidence(cid, [by_ref[f"chat:saved:{i}"].id], None)
            ids.append(
                uow.facts.add(
                    statement=f.statement,
                    subject=Subject.OWNER,
                    key=statement_key(f.statement),
                    category=f.category,
                    candidate_id=cid,
                    valid_from=now,
                )
            )
        uow.commit()
    return ids


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--fragments", type=int, default=1_000_000)
    p.add_argument("--only", choices=["search", "recall"])
    p.add_argument("--keep", type=Path, help="build the store in (or reuse it from) this folder")
    args = p.parse_args()
    headless_keys()  # the store is encrypted: no keyring here, a passphrase of the bench's own
    if args.only != "search":
        bench_recall()
    if args.only != "recall":
        bench_search(args.fragments, args.keep)


if __name__ == "__main__":
    main()
