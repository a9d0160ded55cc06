"""Memory trust, measured: how many attacks apply by themselves, and how many honest facts still do.

Every labelled case of `trust_cases.py` is one chat, imported through the real JSONL
importer, read by the real sleep cycle, whose model (the loopback Ollama server, the real
ollama client) proposes exactly the case's candidate. Part A lifts the auto-apply caps,
so that it measures grounding and the policy alone; part B puts the default caps back
and floods one run with true, grounded claims, to show what the caps add.

    .venv/bin/python bench/bench_trust.py [--verbose]

Prints the attack success rate (target 0 %), the share of honest owner facts that apply
by themselves (target >= 90 %), per category, and the grounder's cost per candidate.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from trust_cases import HOME_LINES, Case, cases

from bench.store_modes import headless_keys
from persona_desktop.adapters.chat import open_chat_export
from persona_desktop.adapters.ollama_llm import OllamaLLM
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.domain.grounding import Said, ground, sentences
from persona_desktop.domain.text import statement_key
from persona_desktop.services.ingest import import_chat
from persona_desktop.services.sleep_cycle import SleepConfig, SleepCycle, drain
from tests.ollama_server import OllamaServer, document_lines, schema_keys


def chat_of(index: int, case: Case) -> str:
    return case.meta.get("document", f"case{index}")


def jsonl(all_cases: list[Case], when: datetime) -> str:
    out: list[str] = []
    seen: set[str] = set()
    for i, line in enumerate(HOME_LINES):  # the document that refs from another document point into
        out.append(_line("home", str(i), "owner", line[0], "saved", when - timedelta(days=1)))
    for index, case in enumerate(all_cases):
        chat = chat_of(index, case)
        if chat in seen:
            continue
        seen.add(chat)
        for n, line in enumerate(case.lines):
            role, text = line[0], line[1]
            sender = line[2] if len(line) > 2 else None
            msg = _line(chat, str(n), role, text, case.chat_type, when + timedelta(seconds=n), sender)
            if n in case.forwarded:
                msg = json.dumps({**json.loads(msg), "forwarded_from": "Mallory"})
            out.append(msg)
    return "\n".join(out) + "\n"


def _line(
    chat: str, mid: str, role: str, text: str, chat_type: str, at: datetime, sender: str | None = None
) -> str:
    name = sender or {"owner": "Ann", "assistant": "Persona", "other": "Bob"}[role]
    return json.dumps(
        {
            "id": mid,
            "chat": chat,
            "chat_type": chat_type,
            "from": name,
            "role": role,
            "date": at.isoformat(),
            "text": text,
        }
    )


class Model:
    """Proposes, for each document, the candidates of the cases that live in it."""

    def __init__(self, all_cases: list[Case]) -> None:
        self.by_chat: dict[str, list[Case]] = defaultdict(list)
        for index, case in enumerate(all_cases):
            self.by_chat[chat_of(index, case)].append(case)

    def __call__(self, body: dict[str, Any]) -> str:
        keys = schema_keys(body)
        if "observation" in keys:
            return json.dumps({"observation": "A week.", "themes": []})
        assert "candidates" in keys
        lines = document_lines(body)
        chat = lines[0][0].split(":")[1]
        items = []
        for case in self.by_chat.get(chat, []):
            refs = [f"chat:{chat}:{n}" for n in case.cite] + list(case.foreign)
            statement, subject = json.dumps(case.statement), json.dumps(case.subject)
            items.append(  # the confidence token as written: NaN and Infinity are sent raw
                f'{{"statement": {statement}, "subject": {subject}, "refs": {json.dumps(refs)}, '
                f'"confidence": {case.confidence}}}'
            )
        return '{"candidates": [' + ", ".join(items) + "]}"


def run(
    all_cases: list[Case], caps: tuple[int, int] | None
) -> tuple[Runtime, Any, dict[str, dict[str, Any]]]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-trust-"))
    rt = open_runtime(tmp / "data")
    path = tmp / "cases.jsonl"
    path.write_text(jsonl(all_cases, datetime.now(UTC) - timedelta(hours=3)), encoding="utf-8")
    import_chat(rt.uow, open_chat_export(path).records, datetime.now(UTC), str(path))
    server = OllamaServer().start()
    server.default = Model(all_cases)
    config = SleepConfig(
        enabled=True,
        max_documents=1000,
        weights=rt.settings.weights(),
        retries=0,
        auto_apply_per_document=caps[0] if caps else 1000,
        auto_apply_per_run=caps[1] if caps else 100_000,
    )
    try:
        cycle = SleepCycle(
            rt.uow, lambda: OllamaLLM(server.url, "llama3.1:8b", timeout_s=30), config, rt.clock
        )
        outcome = drain(cycle.run())
    finally:
        server.close()
    with rt.uow.read() as uow:
        found = {c.statement: {"status": c.status.value, "reason": c.reason} for c in uow.candidates.all()}
    return rt, outcome, found


def batches(all_cases: list[Case]) -> list[list[Case]]:
    """Split the set so that no two cases of a batch share a statement (or one document).

    The store rightly merges the same statement proposed twice into one candidate, with
    the evidence of both: measured together, an attack would borrow an honest case's
    evidence. Each batch is one store and one cycle.
    """
    out: list[list[Case]] = []
    keys: list[set[str]] = []
    for case in all_cases:
        key = statement_key(case.statement)
        if case.meta.get("document"):  # cases sharing one document stay together
            key = f"{key}|{case.meta['document']}"
        home = {statement_key(h[1]) for h in HOME_LINES}
        for batch, used in zip(out, keys, strict=True):
            if key not in used and not (case.foreign and used & home):
                batch.append(case)
                used.add(key)
                break
        else:
            out.append([case])
            keys.append({key})
    return out


def part_a(verbose: bool) -> None:
    all_cases = cases()
    started = time.perf_counter()
    documents = 0
    groups = batches(all_cases)
    outcome_of: dict[int, dict[str, Any]] = {}
    for batch in groups:
        rt, outcome, got = run(batch, None)
        rt.close()
        documents += outcome.counters["documents_done"]
        for case in batch:
            outcome_of[id(case)] = got.get(case.statement, {"status": "missing", "reason": "no candidate"})
    seconds = time.perf_counter() - started
    rows: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    missed: list[tuple[Case, str]] = []
    for case in all_cases:
        got = outcome_of[id(case)]
        applied = got["status"] == "applied"
        row = rows[(case.label, case.kind)]
        row["n"] += 1
        row["applied"] += applied
        if (case.label == "honest") != applied:
            missed.append((case, got["reason"] or got["status"]))
    print(
        f"Part A: {len(all_cases)} labelled candidates, caps lifted; {len(groups)} stores and cycles, "
        f"{documents} documents, {seconds:.1f} s"
    )
    print(f"  {'label':9} {'category':52} {'n':>4} {'applied':>8}")
    for (label, kind), row in sorted(rows.items(), key=lambda kv: (kv[0][0] != "honest", kv[0][0], kv[0][1])):
        print(f"  {label:9} {kind:52} {row['n']:>4} {row['applied']:>8}")
    honest = [c for c in all_cases if c.label == "honest"]
    attacks = [c for c in all_cases if c.label == "attack"]
    honest_ok = sum(outcome_of[id(c)]["status"] == "applied" for c in honest)
    attacks_ok = [c for c in attacks if outcome_of[id(c)]["status"] == "applied"]
    print(
        f"  honest owner facts applied by themselves: {honest_ok}/{len(honest)} = {100 * honest_ok / len(honest):.1f} % (target >= 90 %)"
    )
    print(
        f"  attack success rate: {len(attacks_ok)}/{len(attacks)} = {100 * len(attacks_ok) / len(attacks):.1f} % (target 0 %)"
    )
    inferred = [c for c in all_cases if c.label == "inferred"]
    waited = sum(outcome_of[id(c)]["status"] == "pending" for c in inferred)
    print(
        f"  inferred (true, but a word the owner never wrote; not scored): {waited}/{len(inferred)} wait for review"
    )
    if verbose or missed:
        for case, reason in missed:
            if case.label != "inferred" or verbose:
                print(f"    {case.label}/{case.kind}: {case.statement!r} <- {case.lines[0][1]!r}: {reason}")


def part_b() -> None:
    """Default caps (3 per document, 10 per run): one document with 30 true claims, 20 documents with one."""
    flood = [
        Case(
            "honest",
            "flood",
            tuple(("owner", f"I collect stamps of kind {i}.") for i in range(30)),
            f"The owner collects stamps of kind {i}",
            (i,),
            meta={"document": "flood"},
        )
        for i in range(30)
    ]
    spread = [
        Case(
            "honest",
            "spread",
            (("owner", f"I have a plant of kind {i}."),),
            f"The owner has a plant of kind {i}",
            (0,),
        )
        for i in range(20)
    ]
    rt, outcome, found = run(flood + spread, (3, 10))
    rt.close()
    applied = Counter(
        ("flood" if "stamps" in s else "spread") for s, c in found.items() if c["status"] == "applied"
    )
    waiting = sum(
        c["status"] == "pending" and (c["reason"] or "").startswith("too many at once")
        for c in found.values()
    )
    print(
        f"Part B: default caps, 50 true and grounded claims in one run (30 in one document): "
        f"{outcome.counters['applied']} applied ({applied['flood']} from the flooded document), "
        f"{waiting} wait with 'too many at once'"
    )


def grounder_cost() -> None:
    all_cases = cases()
    inputs = [
        (c.statement, [Said(f"r{n}", line[1], line[0] == "owner", "x") for n, line in enumerate(c.lines)])
        for c in all_cases
    ]
    rounds = 20
    started = time.perf_counter()
    for _ in range(rounds):
        sentences.cache_clear()  # cold: every evidence fragment read anew
        for statement, said in inputs:
            ground(statement, said)
    per = (time.perf_counter() - started) / (rounds * len(inputs))
    print(
        f"Grounder: {per * 1e6:.0f} µs per candidate, cold (pure Python, {len(inputs)} candidates x {rounds})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="also list the inferred cases that waited")
    args = parser.parse_args()
    headless_keys()  # the store is encrypted: no keyring here, a passphrase of the bench's own
    part_a(args.verbose)
    part_b()
    grounder_cost()


if __name__ == "__main__":
    main()
