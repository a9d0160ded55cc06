"""Persona Desktop: a local-first assistant memory with provenance and a gated sleep cycle."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("persona-desktop")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
