"""o3viz.verify.sandbox."""
