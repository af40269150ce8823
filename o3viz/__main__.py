"""``python -m o3viz``: see ``o3viz.cli``."""

from o3viz.cli import main

raise SystemExit(main())
