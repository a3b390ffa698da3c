"""Model evaluation on releases, each benchmark as its paper does it (``culturebench evaluate`` / ``score``).

One package per benchmark, listed in :mod:`culturebench.registry` (``evaluate/<name>/``: its ``BENCHMARK``, the
contract of :mod:`culturebench.contract`, and one module per role, its prompts in ``<name>.prompts``); shared parts,
which know no benchmark: ``backends`` (OpenAI-compatible
client, offline vLLM), ``cache`` and ``runner`` (every response cached in ``RUN_DIR/cache.sqlite``, so a killed run
resumes), ``run_folder`` (release reading and run folders), ``scores`` (the result of scoring, answers joined to the
release), ``stats``, ``uncertainty`` (bootstrap), ``plots`` and ``compare`` (the comparison report);
``local_model`` serves a small real model with llama.cpp.
"""
