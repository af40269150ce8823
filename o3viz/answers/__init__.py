"""The running answer of a trace: the answer-forcing probes (``o3viz.answers.probes``, a registry
of plug-ins) and the runner that puts stated and forced answers on traces and datasets
(``o3viz.answers.run``). The answers themselves are read in ``o3viz.analysis.running_answer``
and ``o3viz.analysis.answer_figures``; they are stored as ``o3viz.trace.answers``."""
