"""o3viz.analysis."""
