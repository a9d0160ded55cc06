"""Screen capture on Wayland desktops: the desktop portal and grim as grabbers, and the
window-information sources exclusions need there (sway, Hyprland, KWin, GNOME's Window
Calls extension). D-Bus is spoken with jeepney (pure Python, no Qt)."""
