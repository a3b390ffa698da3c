"""Re-creates synthetic benchmark items through an OpenAI-compatible endpoint (``culturebench generate TASK``).

Each task is a :class:`culturebench.contract.Generator` that its benchmark lists (``Benchmark.generators``):
here the ``GENERATOR`` of ``culturebench.generation.<task>``, given by a function of its benchmark's package that
imports it, whose ``Options`` (a ``GenerateOptions``: ``out``
(RAW_DIR), ``seed``, ``limit``, ``only``, ``source`` and the task's own) are the flags of ``culturebench generate
<task>`` and whose ``generate(backend, options, console)`` returns (summary line, files written).
Shared plumbing (run folder, log, cache, resume, parsing) is in :mod:`culturebench.generation.common`.
"""
