"""Screen and speech capture loops: Qt-free, off the GUI thread, pausable."""
