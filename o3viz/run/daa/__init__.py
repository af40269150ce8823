"""Dynamic Attention Allocation during a run, in one place: the modes and what each does
(``modes``: ``DAA_MODE_TABLE``), the relevance track of ``observe`` and ``allocate``
(``relevance``: ``DAATrack``, ``BranchBias``), and ``steer`` mode (PASTA): the track
(``steer``: ``SteerTrack``), the marked spans (``steer_spans``) and the ``auto`` head profile
(``steer_profile``). The pure tensor math (the relevance score and its bias, the steering bias)
is in ``o3viz.hooks.daa`` and ``o3viz.hooks.steer``, below the run layer; the settings carrier is
``o3viz.run.config.DAAConfig``."""
