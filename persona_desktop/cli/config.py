"""`config get|set|list`: the settings file of the data dir, and what a changed setting sets off."""

from __future__ import annotations

import argparse
import sys

from persona_desktop.cli.runtime import data_dir, runtime
from persona_desktop.errors import PersonaError


def cmd_config(args: argparse.Namespace) -> int:
    from persona_desktop.bootstrap import load_settings
    from persona_desktop.config import SETTINGS

    settings = load_settings(data_dir(args))
    if args.action == "list":
        for key in sorted(SETTINGS):
            print(f"{key} = {settings.format(key)}")
        return 0
    if not args.key:
        raise PersonaError(f"config {args.action} needs a KEY")
    if args.action == "get":
        print(settings.format(args.key))
        return 0
    if args.value is None:
        raise PersonaError(f"config set {args.key} needs a VALUE")
    settings.set(args.key, args.value)
    if args.key == "app.start_at_login":  # the XDG autostart entry follows the setting
        from persona_desktop.autostart import sync_autostart

        folder = data_dir(args)
        sync_autostart(
            settings.values.app.start_at_login, ["--data-dir", str(folder.resolve())] if folder else []
        )
    if args.key == "storage.encrypted":
        _apply_encryption_setting(args, settings.values.storage.encrypted)
    settings.save()
    print(f"{args.key} = {settings.format(args.key)}")
    return 0


def _apply_encryption_setting(args: argparse.Namespace, encrypted: bool) -> None:
    """Encrypt or decrypt the store now (opening it does); the setting is saved only if that worked."""
    if not encrypted:
        print(
            "persona-desktop: warning: the store, kept crops and clips are being decrypted: anyone who can "
            "read the data dir (a backup, a stolen disk, another admin) can then read everything captured",
            file=sys.stderr,
        )
    with runtime(args, encrypted) as rt:
        state = "encrypted" if rt.store.encrypted else "not encrypted"
    print(f"the store in {rt.data_dir} is {state}")
