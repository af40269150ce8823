"""o3viz.hooks."""
