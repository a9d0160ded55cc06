"""`review run`: the turn review of a conversation with the assistant, started by hand."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from persona_desktop.cli.arguments import int_id
from persona_desktop.cli.output import emit_json
from persona_desktop.cli.runtime import export_after, runtime

if TYPE_CHECKING:
    from persona_desktop.bootstrap import Runtime
    from persona_desktop.services.turn_review import ReviewOutcome, TurnReview


def review_runner(rt: Runtime) -> TurnReview:
    from persona_desktop.service_configs import review_config, sleep_config
    from persona_desktop.services.turn_review import TurnReview

    values = rt.settings.values
    return TurnReview(rt.uow, rt.llm(), rt.clock, review_config(values), sleep_config(values))


def print_review(outcome: ReviewOutcome) -> None:
    """A review's warnings and, when it did not finish, why (stderr)."""
    for warning in outcome.warnings:
        print(f"persona-desktop: warning: {warning}", file=sys.stderr)
    if outcome.error:
        print(f"persona-desktop: review failed: {outcome.error}", file=sys.stderr)
    elif outcome.status != "done":
        print(
            f"persona-desktop: review {outcome.status} after {outcome.iterations} round(s)", file=sys.stderr
        )


def cmd_review_run(args: argparse.Namespace) -> int:
    from persona_desktop.service_configs import review_config
    from persona_desktop.services.chat import assistant_conversation, load_messages, system_prompt
    from persona_desktop.services.turn_review import ReviewKind, default_kind, make_snapshot

    source = int_id(args.source, "source") if args.source is not None else None
    with runtime(args) as rt:
        cfg = review_config(rt.settings.values)
        conv_id, source_id = assistant_conversation(rt.uow, source)
        messages = load_messages(rt.uow, source_id)
        prompt = system_prompt(rt.uow, rt.settings.values.chat.include_observations)
        kind = ReviewKind(args.kind) if args.kind else default_kind(cfg)
        outcome = review_runner(rt).run(make_snapshot(conv_id, prompt, messages), kind)
        if outcome.applied:
            export_after(rt)
    if args.json:
        emit_json({"conversation": conv_id, "source_id": source_id, **outcome.to_json()})
    else:
        print_review(outcome)
        print(outcome.summary() or f"{kind.value.capitalize()} review: nothing proposed")
    return 2 if outcome.status == "failed" else 0
