"""o3viz.compress.context."""
