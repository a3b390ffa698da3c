"""The nouns of the reports counted: ``1 story``, ``2 stories`` (shared by the coverage lines of ``--limit``, the
reasons ``uncertainty`` gives for a number left without an interval, the dataset cards and the generators); on the
ground floor, below ``cards`` and ``evaluate``, importing nothing."""

from __future__ import annotations


def singular(plural: str) -> str:
    """"questions" -> "question", "stories" -> "story", "countries" -> "country"."""
    return plural[:-3] + "y" if plural.endswith("ies") else plural[:-1]


def plural(noun: str) -> str:
    """"story" -> "stories", "question" -> "questions" (the nouns of the reports)."""
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"


def counted(n: int, plural: str) -> str:
    """``1 story``, ``2 stories``."""
    return f"{n:,} {singular(plural) if n == 1 else plural}"
