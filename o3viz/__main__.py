"""``python -m o3viz``: see ``o3viz.cli.main``."""

from o3viz.cli.main import main

raise SystemExit(main())
