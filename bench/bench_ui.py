"""Benchmark of the review window and the idle tray app (issue 5). Prints figures.

    .venv/bin/python bench/bench_ui.py [--candidates 2000] [--facts 10000]

Review window with N waiting candidates and M facts on a real SQLite file:
time to open and show (until the Waiting tab is filled and painted), approve latency
and undo latency (click to table updated), and the RSS of the idle tray app process.
Targets: open < 300 ms, approve and undo < 50 ms each, idle RSS < 150 MB.

Run on a plaintext store and on an encrypted (SQLCipher) one in the same run; the
ratios encrypted/plaintext are printed (target: at most 15 % slower).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for bench.store_modes and tests.ui_support

from bench.store_modes import MODES, data_dir_for, headless_keys, ratio_line
from persona_desktop.adapters.store.unit_of_work import SqlUnitOfWorkFactory
from persona_desktop.app import build_context
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.domain.model import (
    Author,
    CandidateStatus,
    Kind,
    NewFragment,
    SourceInfo,
    Subject,
    Trust,
)
from persona_desktop.domain.proposals import NewFact
from persona_desktop.domain.text import statement_key
from persona_desktop.services.ingest import ingest
from persona_desktop.ui.review_window import ReviewWindow

REPO = Path(__file__).resolve().parents[1]
SIGNALS = {
    "relevance": 0.9,
    "frequency": 0.5,
    "diversity": 0.33,
    "recency": 0.9,
    "consolidation": 0.5,
    "richness": 0.7,
}


def seed(rt: Runtime, pending: int, facts: int) -> None:
    now = datetime.now(UTC)
    n_frag = pending + facts
    frags = [
        NewFragment(
            ref=f"chat:bench:{i}",
            kind=Kind.CHAT,
            author=Author.OWNER,
            trust=Trust.TRUSTED,
            text=f"bench message {i} about hobby {i % 97} and place {i % 31}",
            captured_at=now - timedelta(days=200) + timedelta(seconds=i * 60),
            locator={"message_id": str(i)},
            session="chat:bench",
            seq=i,
        )
        for i in range(n_frag)
    ]
    [res] = ingest(rt.uow, [(SourceInfo("chat:bench", Kind.CHAT, "Bench chat"), frags)], now)
    # Facts accumulate over months: only the last week's show under "Recently applied".
    for start in range(0, facts, 2000):
        day = now - timedelta(days=180 - start // 2000 * 40)
        old = SqlUnitOfWorkFactory(rt.engine, clock=lambda d=day: d)
        with old() as uow:
            ids = {
                f.ref: f.id
                for f in uow.fragments.by_refs(
                    [f"chat:bench:{i}" for i in range(start, min(facts, start + 2000))]
                ).values()
            }
            for i in range(start, min(facts, start + 2000)):
                st = f"Fact {i}: the owner likes hobby {i % 97} in place {i % 31}"
                cid = uow.candidates.add(
                    statement=st,
                    subject=Subject.OWNER,
                    key=statement_key(st),
                    category="bench",
                    origin="sleep",
                    run_id=None,
                    proposal=NewFact(),
                    supersedes_fact_id=None,
                    created_at=day,
                )
                uow.candidates.set_scored(
                    cid,
                    status=CandidateStatus.APPLIED,
                    score=0.8,
                    signals=SIGNALS,
                    reason="bench",
                    supersedes_fact_id=None,
                )
                uow.candidates.add_evidence(cid, [ids[f"chat:bench:{i}"]], None)
                uow.facts.add(
                    statement=st,
                    subject=Subject.OWNER,
                    key=statement_key(st),
                    category="bench",
                    candidate_id=cid,
                    valid_from=day,
                )
            uow.commit()
    with rt.uow() as uow:
        refs = [f"chat:bench:{facts + i}" for i in range(pending)]
        by_ref = uow.fragments.by_refs(refs)
        for i in range(pending):
            st = f"Candidate {i}: the owner may like hobby {i % 97}"
            cid = uow.candidates.add(
                statement=st,
                subject=Subject.OWNER if i % 2 else Subject.OTHER,
                key=statement_key(st),
                category="bench",
                origin="sleep",
                run_id=None,
                proposal=NewFact(),
                supersedes_fact_id=None,
                created_at=now,
            )
            uow.candidates.set_scored(
                cid,
                status=CandidateStatus.PENDING,
                score=0.5,
                signals=SIGNALS,
                reason="bench",
                supersedes_fact_id=None,
            )
            uow.candidates.add_evidence(cid, [by_ref[refs[i]].id], None)
        uow.commit()
    assert res.added == n_frag


def _wait(app: QApplication, cond, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    end = time.perf_counter() + timeout
    while not cond():
        app.processEvents()
        if time.perf_counter() > end:
            raise TimeoutError("bench step did not finish")
        time.sleep(0.0005)


def seed_store(data_dir: Path, pending: int, facts: int, mode: str) -> None:
    rt = open_runtime(data_dir)
    try:
        t0 = time.perf_counter()
        seed(rt, pending, facts)
        print(
            f"[{mode}] seeded {pending} waiting candidates and {facts} facts in {time.perf_counter() - t0:.1f} s"
        )
    finally:
        rt.close()


def bench_review(data_dir: Path, pending: int, rounds: int) -> dict[str, list[float]]:
    """Open the review window (twice: the second, warm open counts), then approve and undo `rounds` times."""
    app = QApplication.instance() or QApplication(["bench"])
    rt = open_runtime(data_dir)
    ctx = build_context(rt)
    opens = []
    for _ in range(2):
        t0 = time.perf_counter()
        w = ReviewWindow(ctx)
        w.show()
        _wait(app, lambda w=w: len(w.pending.rows) == pending)
        app.processEvents()
        w.pending_table.viewport().repaint()
        opens.append((time.perf_counter() - t0) * 1000)
        _wait(app, lambda w=w: not w.work.busy())
        if len(opens) < 2:
            w.shutdown()
            w.close()
            w.deleteLater()
            app.processEvents()
    approves, undos = [], []
    for _ in range(rounds):
        w.pending_table.selectRow(0)
        _wait(app, lambda: not w.work.busy())
        n = len(w.pending.rows)
        t0 = time.perf_counter()
        w.approve_selected()
        _wait(app, lambda n=n: len(w.pending.rows) == n - 1)
        approves.append((time.perf_counter() - t0) * 1000)
        _wait(app, lambda: not w.work.busy())
        t0 = time.perf_counter()
        w.undo()
        _wait(app, lambda n=n: len(w.pending.rows) == n)
        undos.append((time.perf_counter() - t0) * 1000)
        _wait(app, lambda: not w.work.busy())
    w.shutdown()
    w.close()
    rt.close()
    return {"open_ms": [opens[-1]], "approve_ms": approves, "undo_ms": undos}


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def bench_idle_rss(data_dir: Path, settle: float, mode: str = "") -> float:
    env = {**os.environ}
    xserver = None
    try:
        from tests.ui_support import start_xvfb, stop_xvfb

        xserver = start_xvfb()
        env = xserver.env()
        where = "Xvfb + trayer (a real tray)"
    except Exception as exc:  # no X here: measure offscreen, where the app shows its small main window
        env["QT_QPA_PLATFORM"] = "offscreen"
        where = f"offscreen (no X server: {exc})"
    proc = subprocess.Popen(
        [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "running, data dir ...": the store is open (the key derived)
        if "running" not in line:
            raise RuntimeError(f"the app did not start: {line!r}")
        time.sleep(settle)
        samples = []
        for _ in range(5):
            samples.append(_rss_mb(proc.pid))
            time.sleep(0.5)
        print(
            f"[{mode}] idle tray app RSS ({where}, {settle:.0f} s after it opened the store): {max(samples):.0f} MB (target < 150 MB)"
        )
        return max(samples)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if xserver is not None:
            stop_xvfb(xserver)


def main() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(REPO))  # for tests.ui_support (Xvfb + trayer)
    p = argparse.ArgumentParser()
    p.add_argument("--candidates", type=int, default=2000)
    p.add_argument("--facts", type=int, default=10000)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--settle", type=float, default=5.0)
    p.add_argument("--pairs", type=int, default=3, help="plaintext/encrypted measurement pairs, alternating")
    args = p.parse_args()
    headless_keys()
    tmp = Path(tempfile.mkdtemp(prefix="bench-ui-"))
    samples: dict[str, dict[str, list[float]]] = {m: {} for m in MODES}
    try:
        data = {m: data_dir_for(tmp, m, {"app.first_run_done": True}) for m in MODES}
        for mode in MODES:
            seed_store(data[mode], args.candidates, args.facts, mode)
        per_pair = max(1, args.rounds // args.pairs)
        for i in range(args.pairs):  # alternate which goes first: the machine's load drifts
            for mode in MODES if i % 2 == 0 else tuple(reversed(MODES)):
                for key, values in bench_review(data[mode], args.candidates, per_pair).items():
                    samples[mode].setdefault(key, []).extend(values)
        for mode in MODES:
            s = samples[mode]
            print(
                f"[{mode}] review window open+show with {args.candidates} waiting / {args.facts} facts: median "
                f"{statistics.median(s['open_ms']):.0f} ms (runs: {', '.join(f'{x:.0f}' for x in s['open_ms'])}; "
                f"target < 300 ms); approve median {statistics.median(s['approve_ms']):.1f} ms, undo median "
                f"{statistics.median(s['undo_ms']):.1f} ms ({len(s['approve_ms'])} rounds; target < 50 ms)"
            )
        for mode in MODES if args.pairs % 2 == 0 else tuple(reversed(MODES)):
            samples[mode]["rss_mb"] = [bench_idle_rss(data[mode], args.settle, mode)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {m: {k: statistics.median(v) for k, v in samples[m].items()} for m in MODES}
    plain, enc = med["plaintext"], med["encrypted"]
    print(ratio_line("review window open+show (median)", plain["open_ms"], enc["open_ms"], "ms"))
    print(ratio_line("approve latency (median)", plain["approve_ms"], enc["approve_ms"], "ms"))
    print(ratio_line("undo latency (median)", plain["undo_ms"], enc["undo_ms"], "ms"))
    print(ratio_line("idle tray app RSS", plain["rss_mb"], enc["rss_mb"], "MB"))


if __name__ == "__main__":
    main()
