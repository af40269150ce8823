"""o3viz.tasks.spec."""
