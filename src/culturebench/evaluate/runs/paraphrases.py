"""Wording variants (issue #63, docs/robustness.md#wording-variants): ``--variants paraphrase`` (every paraphrase
the release's ``variants`` config has: paraphrase1..K) or ``paraphraseK`` asks each item with its K-th paraphrase
in place of the text it paraphrases (``raw.paraphrases``), the options in the paper's order and the rest of the
prompt unchanged.

An item whose paraphrase does not match the release (the config lacks it for that item, or it was written for
another wording) is asked in its original wording, its records marked (``paraphrase_fallback``), and the run says
so in one line; a paraphrase identical to the original or to another paraphrase makes an identical request, said
in one line and asked once (the response cache keys on the request). This module imports nothing heavy (the
command line reads ``family`` at start).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from culturebench.errors import InputError

PARAPHRASE = "paraphrase"
"""The variant family: ``paraphrase`` (all K) or ``paraphrase<K>``."""
_NUMBERED = re.compile(rf"^{PARAPHRASE}(\d+)$")
CONFIG = "variants"
FALLBACK_KEY = "paraphrase_fallback"
"""The response record's key saying why an item of a paraphrase variant was asked in its original wording."""


def family(variant: str) -> str:
    """``paraphrase`` for ``paraphrase`` and ``paraphrase<K>``, else ``variant`` (what a benchmark defines)."""
    return PARAPHRASE if variant == PARAPHRASE or _NUMBERED.match(variant) else variant


def is_paraphrase(variant: str) -> bool:
    return family(variant) == PARAPHRASE


@dataclass(frozen=True)
class Wordings:
    """The text each (paraphrase variant, item) asks, why an item falls back to its original, and the run's notes."""

    variants: tuple[str, ...]
    """The run's variants with ``paraphrase`` expanded to paraphrase1..K."""
    texts: Mapping[tuple[str, str], str] = field(default_factory=dict)
    fallback: Mapping[tuple[str, str], str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def text(self, variant: str, item: str, original: str) -> tuple[str, str | None]:
        """(the text ``variant`` asks for ``item``, the fallback reason or None)."""
        if not is_paraphrase(variant):
            return original, None
        if (variant, item) in self.texts:
            return self.texts[(variant, item)], None
        return original, self.fallback.get((variant, item), "no paraphrase of this item in the release")


def wordings(variants: Sequence[str], table: Any, release: Path, originals: Mapping[str, str]) -> Wordings:
    """``variants`` with ``paraphrase`` expanded by the release's ``variants`` config (``table``; None when the
    release has none), and each paraphrase of the asked items (``originals``: item id -> the text the release asks)
    that matches the release; an InputError when a paraphrase variant is asked of a release without the config, or
    beyond its K."""
    if not any(is_paraphrase(v) for v in variants):
        return Wordings(tuple(variants))
    from culturebench.raw.paraphrases import normal, repeated

    if table is None:
        raise InputError(f"release has no {CONFIG!r} config to ask paraphrases from (put RAW/paraphrases/"
                         "<benchmark>.jsonl in the raw folder, e.g. from `culturebench generate paraphrases NAME`, "
                         "and rebuild)", file=release, column="variants")
    k = int(table["paraphrase_index"].max()) if table.height else 0
    expanded: list[str] = []
    for v in variants:
        if v == PARAPHRASE:
            expanded += [f"{PARAPHRASE}{i}" for i in range(1, k + 1)]
        elif is_paraphrase(v) and not 1 <= int(_NUMBERED.match(v).group(1)) <= k:
            raise InputError(f"variant {v!r}: the release's {CONFIG} config has paraphrases 1 to {k}",
                             file=release, column="variants")
        else:
            expanded.append(v)
    expanded = list(dict.fromkeys(expanded))
    asked = [v for v in expanded if is_paraphrase(v)]
    texts: dict[tuple[str, str], str] = {}
    fallback: dict[tuple[str, str], str] = {}
    rows = table.filter(table["id"].is_in(list(originals)))
    for item, variant, original, paraphrase in rows.select("id", "variant", "original", "paraphrase").iter_rows():
        if variant not in asked:
            continue
        if normal(original) == normal(originals[item]):
            texts[(variant, item)] = paraphrase.strip()
        else:
            fallback[(variant, item)] = "the release's paraphrase was written for another wording of the item"
    notes = []
    foreign = int((~table["matches_release"]).sum()) if "matches_release" in table.columns else 0
    other = sorted({item for _, item in fallback})
    none = sorted({item for item in originals for v in asked if (v, item) not in texts} - set(other))
    if other or none or foreign:
        parts = [f"{len(items)} items {what} ({', '.join(items[:5])}{' ...' if len(items) > 5 else ''})"
                 for items, what in ((none, "without a paraphrase in the release"),
                                     (other, "whose paraphrase was written for another wording"))
                 if items]
        notes.append("paraphrase variants: " + "; ".join(parts) + (": asked in their original wording, records "
                     f"marked {FALLBACK_KEY}" if parts else "")
                     + (f"{'; ' if parts else ''}{foreign} rows of the {CONFIG} config do not match the release "
                        "(matches_release)" if foreign else ""))
    same = [f"{i} {v}: {what}" for i, v, what in repeated(rows) if v in asked and (v, i) in texts]
    if same:
        notes.append(f"{len(same)} paraphrases identical to their original or another paraphrase, asked once: "
                     f"{'; '.join(same[:5])}{' ...' if len(same) > 5 else ''}")
    return Wordings(tuple(expanded), texts, fallback, tuple(notes))



def summary_lines(benchmark: str, block: Mapping | None) -> list[str]:
    """The summary's ``warning:`` line per note of metrics.json's ``variants.paraphrase_notes`` (none without)."""
    return [f"warning: {benchmark} {note}" for note in (block or {}).get("paraphrase_notes", [])]
