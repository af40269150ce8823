"""o3viz.text."""
