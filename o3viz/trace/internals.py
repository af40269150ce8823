"""The old name of ``o3viz.trace.layer_records`` (routing and logit-lens records), kept so that
``from o3viz.trace.internals import RoutingRecord`` in user code keeps working. New code imports
``o3viz.trace.layer_records``."""

from __future__ import annotations

from o3viz.trace.layer_records import InternalsRecord, LensRecord, RoutingRecord

__all__ = ["InternalsRecord", "LensRecord", "RoutingRecord"]
