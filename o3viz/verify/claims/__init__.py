"""o3viz.verify.claims."""
