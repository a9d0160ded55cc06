"""Adapters: concrete implementations of the ports (store, LLM, OCR, speech, importers)."""
