"""Model evaluation on releases, each benchmark as its paper does it (``culturebench evaluate`` / ``score``).

One module per benchmark (``wvb``, ``cdeval``, ``normad``, ``llm_globe``, ``socialcc``) with its prompts in
``<name>_prompts``; shared parts: ``backends`` (OpenAI-compatible client, offline vLLM), ``cache`` and ``runner``
(every response cached in ``RUN_DIR/cache.sqlite``, so a killed run resumes), ``runs`` (release reading and run
folders), ``metrics``, ``stats`` and ``plots``; ``local_model`` serves a small real model with llama.cpp.
"""
