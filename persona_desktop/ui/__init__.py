"""The only package that imports PySide6: tray, windows, workers."""
