"""`storage`: what uses the space; `storage trim`; `storage passphrase|keyring`: re-key the store."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from persona_desktop.cli.output import emit_json
from persona_desktop.cli.runtime import runtime

if TYPE_CHECKING:
    from persona_desktop.bootstrap import Runtime


def cmd_storage(args: argparse.Namespace) -> int:
    """`storage`: what uses the space; `storage trim`; `storage passphrase` / `storage keyring` re-key."""
    from persona_desktop.services.storage_budget import enforce_budget, measure

    with runtime(args) as rt:
        budget = rt.settings.values.storage.max_mb
        if args.action in ("passphrase", "keyring"):
            return _change_key(rt, to_keyring=args.action == "keyring")
        if args.action == "trim":
            result = enforce_budget(rt.uow, rt.data_dir, budget, rt.clock.now())
            if result.before.fraction <= 1.0:
                print(f"under the budget ({result.before.fraction:.0%} of {budget} MB): nothing to trim")
                return 0
            print(
                f"trimmed {result.captures} capture(s), {result.fragments} fragment(s), "
                f"{result.media_files} crop/clip file(s); now {result.after.fraction:.0%} of the budget"
                + ("; still over it: only cited captures and chat are left" if result.still_over else "")
            )
            return 0
        report = measure(rt.uow, rt.data_dir, budget, detailed=True)
        key = rt.store.key_source
    if args.json:
        emit_json({"encrypted": key is not None, "key": key, **report.to_json()})
        return 0
    protection = {"keyring": "key in the OS keyring", "passphrase": "key under your passphrase"}
    print(f"encrypted: {'yes, ' + protection[key] if key else 'no (storage.encrypted false)'}")
    for line in report.lines():
        print(line)
    return 0


def _change_key(rt: Runtime, *, to_keyring: bool) -> int:
    from persona_desktop.services.store_keys import journal_rekeyed

    protection = rt.store.change_key(to_keyring=to_keyring)
    journal_rekeyed(rt.uow, rt.clock.now(), protection)
    where = "in the OS keyring" if protection == "keyring" else "under the new passphrase"
    print(f"the store was re-keyed: a new key, kept {where}; the old key no longer opens it")
    return 0
