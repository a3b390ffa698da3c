"""SocialCC's release (config ``scenarios``) read into the scenarios the dialogues are played from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.runs import release_configs
from culturebench.evaluate.socialcc import BENCHMARK, prompts
from culturebench.evaluate.socialcc.config import Config

SCENARIO_COLUMNS = ("id", "scenario", "events", "characters", "commonsense_country", "commonsense_topic",
                    "commonsense_item", "value_item", "value_country", "value_topic")
ZONE_COLUMNS = ("iw_zone", "cultural_zone", "zone")

UNKNOWN = "unknown"
TRANSCRIPTS_FILE = "transcripts.jsonl"


# ---------------------------------------------------------------------------------------------------- release


def release_tables(release: Path, split: str | None = None) -> dict[str, pl.DataFrame]:
    """The release's ``scenarios`` (ids as text; all splits or only ``split``)."""
    release = Path(release)
    tables = release_configs.release_configs(release, BENCHMARK.name, "a SocialCC release")
    scenarios = release_configs.release_config(tables, "scenarios", release, columns=SCENARIO_COLUMNS, split=split)
    scenarios = scenarios.with_columns(pl.col("id").cast(pl.String), pl.col("value_country").cast(pl.String))
    duplicated = scenarios.filter(pl.col("id").is_duplicated())
    if duplicated.height:
        raise InputError(f"scenario id {duplicated['id'][0]!r} occurs more than once", file=release, column="id")
    short = scenarios.filter(pl.col("characters").list.len() < 2)
    if short.height:
        raise InputError("scenario needs Character 1 (antagonist) and Character 2 (protagonist)", file=release,
                         column="characters", row=None)
    return {"scenarios": scenarios}


@dataclass
class Scenario:
    id: str
    country: str  # the value item's country (Fig. 5)
    zone: str  # its Inglehart-Welzel group (Fig. 6)
    topic: str  # commonsense topic (Fig. 7)
    value_topic: str  # Table 4A category (Fig. 6)
    fields: dict  # prompt fields (prompts.scenario_fields)
    commonsense_country: str | None = None  # the commonsense item's country (Fig. 5)

    @property
    def names(self) -> dict[str, str]:
        return {"antagonist": self.fields["Character 1"], "protagonist": self.fields["Character 2"]}


def release_zones(scenarios: pl.DataFrame) -> dict[str, str | None]:
    """Scenario id -> the release's zone of its value country (``iw_zone``; None where null or no such column)."""
    column = next((c for c in ZONE_COLUMNS if c in scenarios.columns), None)
    return dict(zip(scenarios["id"], scenarios[column] if column else [None] * scenarios.height))


def zone_of(release_zone: str | None, country: str | None, config: Config) -> str:
    """Fig. 6's group of a scenario: the release's zone, else the config's zones table, else "unknown"."""
    return str(release_zone or config.zones.get(str(country)) or UNKNOWN)


def scenarios_from(tables: dict, config: Config) -> list[Scenario]:
    scenarios = tables["scenarios"]
    zones = release_zones(scenarios)
    out = []
    for row in scenarios.iter_rows(named=True):
        country = row["value_country"] or UNKNOWN
        zone = zone_of(zones[row["id"]], country, config)
        out.append(Scenario(row["id"], country, zone, str(row.get("commonsense_topic") or UNKNOWN),
                            str(row.get("value_topic") or UNKNOWN),
                            prompts.scenario_fields(row, config.event_stand_ins), row.get("commonsense_country")))
    return out
