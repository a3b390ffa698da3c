"""Re-creates synthetic benchmark items through an OpenAI-compatible endpoint (``culturebench generate TASK``).

Each task (listed under its benchmark in :mod:`culturebench.registry`) is a module
``culturebench.generation.<task>`` exposing ``cli_generate(backend, options, console) -> (summary line, files
written)``; ``options`` holds ``out`` (RAW_DIR), ``seed``, ``limit``, ``only``, ``source``,
``language``.
Shared plumbing (run folder, log, cache, resume, parsing) is in :mod:`culturebench.generation.common`.
"""
