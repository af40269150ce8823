"""o3viz.app."""
