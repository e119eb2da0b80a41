"""The window: layout and wiring, menus, files, recordings, presenter, start-up."""
