"""Secrets a backend sends (API keys, ``--header`` values, proxy passwords): registered when a backend is made and
replaced by ``<redacted>`` in whatever a server sends back, so that they are never shown or stored."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from culturebench.errors import InputError

_SENT_SECRETS: set[str] = set()
"""Every key and header value a backend of this process sends (registered when the backend is made)."""
REDACTED = "<redacted>"


def register_secrets(values) -> None:
    """Remember values that must never be shown or stored (API keys, ``--header`` values, proxy passwords); values
    shorter than 4 characters and the placeholder key ``EMPTY`` are not secrets."""
    _SENT_SECRETS.update(v for v in values if v and len(v) >= 4 and v != "EMPTY")


def sent_secrets() -> list[str]:
    """The registered secrets, longest first (so that a secret containing another is replaced whole)."""
    return sorted(_SENT_SECRETS, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``<redacted>``: by value, whatever a server echoes back."""
    for secret in sent_secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_bytes(content: bytes) -> bytes:
    """A reply body with every registered secret replaced (before anything parses or shows it)."""
    for secret in sent_secrets():
        raw = secret.encode()
        if raw in content:
            content = content.replace(raw, REDACTED.encode())
    return content


def check_header_value(value: str, what: str) -> str:
    """A key or header value that can be sent: no line breaks or other control characters (said without the
    value, which is a secret)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise InputError(f"{what} contains a line break or another control character (a stray newline when it "
                         "was pasted?)")
    return value


def proxy_passwords() -> list[str]:
    """Passwords in the proxy URLs of the environment (``https://user:password@proxy:3128``)."""
    found = []
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        try:
            password = urlsplit(os.environ.get(name) or "").password
        except ValueError:
            password = None
        if password:
            found.append(password)
    return found
