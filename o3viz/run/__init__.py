"""o3viz.run."""
