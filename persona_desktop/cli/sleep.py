"""`sleep run`: one sleep cycle now, and what the owner can do when it did not happen."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from persona_desktop.cli.output import emit_json, me
from persona_desktop.cli.runtime import export_after, runtime

if TYPE_CHECKING:
    from persona_desktop.config import Settings
    from persona_desktop.services.ollama_diagnosis import Diagnosis
    from persona_desktop.services.sleep_cycle import Progress


def cmd_sleep_run(args: argparse.Namespace) -> int:
    from persona_desktop.service_configs import sleep_config
    from persona_desktop.services.sleep_cycle import SleepCycle, drain

    diagnosis = None

    def show(p: Progress) -> None:
        if not args.json:
            print(f"  {p.phase}: {p.message}", file=sys.stderr)

    with runtime(args) as rt:
        cycle = SleepCycle(rt.uow, rt.llm, sleep_config(rt.settings.values), rt.clock)
        outcome = drain(cycle.run(skip_quiet=args.anyway), show)
        if outcome.counters.get("applied"):
            export_after(rt)
        if outcome.status.value == "failed":
            diagnosis = _diagnose_llm(rt.settings)
    if args.json:
        emit_json(outcome.to_json() | ({"diagnosis": diagnosis.to_json()} if diagnosis else {}))
    else:
        print(outcome.message)
        if outcome.run_id is not None:
            c = outcome.counters
            print(
                f"run {outcome.run_id}: {c.get('documents_done', 0)}/{c.get('documents', 0)} documents read, "
                f"{c.get('candidates', 0)} new candidates, {c.get('applied', 0)} applied, "
                f"{c.get('pending', 0)} pending, {c.get('dropped', 0)} dropped"
            )
        _sleep_next_step(outcome.status.value, diagnosis, me(args))
    return 0 if outcome.status.value != "failed" else 2


def _diagnose_llm(settings: Settings) -> Diagnosis | None:
    """After a failed run: what is wrong with the model host, if anything (None when it is ready)."""
    from persona_desktop.adapters.ollama_probe import check_ollama

    found = check_ollama(settings.ollama_host(), settings.values.ollama.model)
    return None if found.ready else found


def _sleep_next_step(status: str, diagnosis: Diagnosis | None, command: str) -> None:
    """What the owner can do about a run that did not happen, as a command to type."""
    if status == "disabled":
        print(f"Turn it on with: {command} config set sleep.enabled true")
    elif status == "deferred":
        print(f"It waits until you have been away that long. To run it now: {command} sleep run --anyway")
    elif diagnosis is not None:
        print(f"{diagnosis.summary}\nNext step: {diagnosis.next_step}", file=sys.stderr)
