"""How one model's chat requests are written (``RequestShape``): the token limit's name and the sampling parameters
left out, fixed in advance or learnt from the API's "unsupported parameter" errors (reasoning models)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from culturebench.errors import InputError

ADAPTABLE = ("temperature", "top_p", "stop", "seed")
"""Sampling parameters a model may reject (reasoning models: OpenAI's o-series and gpt-5 family accept only the
default temperature and top_p, some no ``stop``); they are then left out of its requests."""


@dataclass
class RequestShape:
    """How one model's requests are written: the name of the token limit (``max_tokens``, or
    ``max_completion_tokens`` for reasoning models) and the sampling parameters left out. Fixed in advance
    (``--request-shape`` / a config's ``request_shape``), or learnt from the API's own "unsupported parameter" /
    "unsupported value" error, once per model (``adapted`` lists each change and the message that caused it): the
    first request of each kind (``SamplingParams.probe_kind``: which sampling parameters it sets to other than their
    defaults) goes alone, the others once it is answered, so a refusal is met once, not once per request in flight."""

    token_limit: str = "max_tokens"
    omit: list[str] = field(default_factory=list)
    adapted: list[dict] = field(default_factory=list)
    confirmed: set = field(default_factory=set)  # request kinds (``SamplingParams.probe_kind``) answered in this shape

    @classmethod
    def from_options(cls, value) -> RequestShape:
        """From ``{"token_limit": "max_completion_tokens", "omit": ["temperature"]}`` (keys optional)."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping) or set(value) - {"token_limit", "omit"}:
            raise InputError("request_shape must be a mapping with token_limit and/or omit, e.g. "
                             '{"token_limit": "max_completion_tokens", "omit": ["temperature", "top_p"]}')
        token_limit = value.get("token_limit", "max_tokens")
        omit = list(value.get("omit") or [])
        if token_limit not in ("max_tokens", "max_completion_tokens"):
            raise InputError(f"request_shape token_limit must be max_tokens or max_completion_tokens, "
                             f"got {token_limit!r}")
        unknown = [name for name in omit if name not in ADAPTABLE]
        if unknown:
            raise InputError(f"request_shape omit: {unknown[0]!r} cannot be left out; choose from "
                             f"{', '.join(ADAPTABLE)}")
        return cls(token_limit=token_limit, omit=omit)

    @classmethod
    def per_model(cls, value, model: str) -> dict[str, RequestShape]:
        """``--request-shape``: one shape (for ``model``, the evaluated one) or ``{model name: shape}`` (any role
        a model plays: evaluated model, judge, juror, antagonist) as {model name: RequestShape}."""
        if isinstance(value, Mapping) and value and set(value) <= {"token_limit", "omit"}:
            return {model: cls.from_options(value)}
        if not isinstance(value, Mapping):
            raise InputError("--request-shape must be a JSON object: a shape or {model name: shape}")
        return {str(name): cls.from_options(shape) for name, shape in value.items()}

    def as_dict(self) -> dict:
        return {"token_limit": self.token_limit, "omit": list(self.omit), "adapted": list(self.adapted)}

    def adapt(self, param: str | None, message: str) -> bool:
        """Change the shape after the API rejected ``param``; False when nothing is left to change for it."""
        if param in ("max_tokens", "max_completion_tokens") and param == self.token_limit:
            self.token_limit = "max_completion_tokens" if param == "max_tokens" else "max_tokens"
            change = f"{param} -> {self.token_limit}"
        elif param in ADAPTABLE and param not in self.omit:
            self.omit.append(param)
            change = f"{param} left out"
        else:
            return False
        self.adapted.append({"change": change, "error": message})
        return True


def rejected_param(content: bytes) -> str | None:
    """The parameter an HTTP 400 rejects as unsupported (OpenAI's ``error.code`` "unsupported_parameter" or
    "unsupported_value" with ``error.param``), else None."""
    try:
        error = json.loads(content).get("error")
    except (ValueError, AttributeError):
        return None
    if not isinstance(error, Mapping):
        return None
    if error.get("code") in ("unsupported_parameter", "unsupported_value") and isinstance(error.get("param"), str):
        return error["param"]
    # gateways that pass OpenAI's message on without its code and param
    named = re.match(r"Unsupported (?:parameter|value): '(\w+)'", str(error.get("message") or ""))
    return named.group(1) if named else None
