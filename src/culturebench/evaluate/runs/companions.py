"""The backends of a run's companion models (judges, jurors, an antagonist), made like the evaluated model's, and the
request shape a config file gives one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebench.errors import InputError

def companion_backend(model: str, base_url: str | None, kind: str = "openai", like: Any = None,
                      request_shape: Any = None) -> Any:
    """The backend of a judge, juror or antagonist (``kind`` "openai" or "vllm"): an ``openai`` backend with the
    evaluated backend's client settings (``like``: its ``--concurrency``, ``--timeout``, retries, headers, prices)
    when it has them, and the role's ``request_shape`` (``request_shape_option``) when the config fixes one. A vllm
    companion takes an evaluated vllm backend's ``--engine-args`` (the same model shares its loaded engine)."""
    if kind == "vllm":
        from culturebench.evaluate.models.vllm_backend import VLLMBackend

        return VLLMBackend(model, engine_args=getattr(like, "engine_overrides", None),
                           log_dir=getattr(like, "log_dir", None))
    if hasattr(like, "like"):
        return like.like(model, base_url, request_shape=request_shape)
    from culturebench.evaluate.models.backends import OpenAIBackend

    return OpenAIBackend(model, base_url=base_url, request_shape=request_shape)


def request_shape_option(value: Any, file: Path | None, column: str) -> dict | None:
    """A role's ``request_shape`` in a config file (``{"token_limit": "max_completion_tokens", "omit": [...]}``),
    checked (``request_shape.RequestShape.from_options``) and kept as that mapping (run.json records the config as
    JSON); None when not given; anything else is an InputError naming the file and the key."""
    from culturebench.evaluate.models.request_shape import RequestShape

    if value is None:
        return None
    try:
        RequestShape.from_options(value)
    except InputError as exc:
        raise InputError(exc.message, file=file, column=column) from None
    return dict(value)
