"""What every builder returns and what the release writer needs to know about a benchmark.

A builder is a module (or package) per benchmark, from raw files to validated tables: ``NAME``, ``CARD``
(:class:`CardInfo`), ``STAGES`` (the progress bar's stages), ``raw_present(raw) -> bool``, ``build(raw, seed,
progress[, options]) -> BuildOutput`` and ``checks(tables) -> list[CheckResult]`` (the cross-table checks); where
its build takes options, ``Options`` (a :class:`culturebench.options.BuildOptions`) and ``build``'s ``options``;
``manifest_card(manifest)`` where the card depends on the build, and ``left_out_rows(provenance)`` where it leaves
source rows out without quarantining them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import polars as pl

from culturebench.io import InputFile

Progress = Callable[[str], None]
"""Called with the name of each stage as a build enters it (drives the CLI's progress bar)."""


@dataclass(frozen=True)
class ConfigInfo:
    """A release config as the card describes it."""

    name: str
    description: str
    redistributable: bool = True
    license_name: str | None = None
    """For a config that is not redistributable: the name of the source terms (``publish --allow-restricted``)."""


def license_name(benchmark: str, config: ConfigInfo | None) -> str:
    """The license name ``publish --allow-restricted`` must give for a not-redistributable config (its
    ``license_name``, else ``<benchmark>-source-terms``)."""
    return getattr(config, "license_name", None) or f"{benchmark}-source-terms"


@dataclass(frozen=True)
class CardInfo:
    pretty_name: str
    summary: str
    license: str
    citation: str
    configs: tuple[ConfigInfo, ...]
    creation: str
    considerations: str
    tags: tuple[str, ...] = ()
    source: str = ""
    """Where a user gets the raw files (for the card of an upload that withholds configs)."""
    rebuilt_from: str = ""
    """What a release of the publishers' files is rebuilt from (the card's "This release was rebuilt by
    culturebench from ..."); a release of the bundled sample says it was rebuilt from the sample instead."""
    language: tuple[str, ...] = ("en",)
    """ISO 639-1 codes of the text in the release (the card's ``language``; two or more make it multilingual)."""
    task_categories: tuple[str, ...] = ()
    """Hub task categories (https://huggingface.co/tasks), e.g. ``question-answering``, ``text-classification``."""
    annotations_creators: tuple[str, ...] = ()
    """Who made the labels: found, crowdsourced, expert-generated, machine-generated, no-annotation, other."""
    source_datasets: tuple[str, ...] = ("original",)
    """``original`` or ``extended|<hub id>`` (the Hub's metadata spec)."""
    license_name: str = ""
    """For ``license: other``: a short id of the terms (the card's ``license_name``)."""
    license_link: str = ""
    """For ``license: other``: where the terms are (the card's ``license_link``; a URL or LICENSE file)."""
    license_details: str = ""
    """What the license is and why, in one or two sentences (always printed in the card's Licensing section)."""


@dataclass
class BuildOutput:
    """Tables per config and split, rows dropped by a rule (with a ``reason`` column), and the raw inputs read."""

    tables: dict[str, dict[str, pl.DataFrame]]
    quarantine: dict[str, pl.DataFrame]
    inputs: list[InputFile]
    rows_read: int
    rows_kept: int
    provenance: dict = field(default_factory=dict)
    card: CardInfo | None = None
    """The card of this build when it depends on the inputs (else the builder's ``CARD``)."""

    @property
    def rows_quarantined(self) -> int:
        return sum(frame.height for frame in self.quarantine.values())
