"""Sources that run inside the sandbox, handed to ``python -c`` (never imported by the app, except
``plain`` by tests). They import nothing from o3viz and stay Python 3.8-compatible."""
