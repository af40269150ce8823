"""o3viz.testing."""
