"""o3viz.verify."""
