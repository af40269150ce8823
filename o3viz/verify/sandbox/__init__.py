"""The code sandbox: untrusted code runs here and nowhere else (docs/sandbox.md).

- ``run``: ``run_sandboxed(job)``, ``SandboxLimits``, ``SandboxRun``; the judge/candidate split.
- ``isolation``: the modes (bubblewrap, landlock+rlimits, rlimits), what each stops, the interpreter.
- ``process``: starting the processes, draining their pipes, the deadline and the kill.
- ``memory``: the memory bound of a whole verdict (a leaf cgroup, or a watchdog over its processes).
- ``cleanup``: measuring and removing what the code left, at any depth.
- ``inside/``: the programs that run in the sandbox (the judge's ``trusted_tests``, ``candidate``, the
  plain-data codec, confinement).
"""
