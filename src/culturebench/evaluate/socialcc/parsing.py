"""SocialCC's saved transcripts read back (``score``, ``compare``): transcripts.jsonl, each dialogue's zone looked up
as ``evaluate`` does, every saved judgement parsed again."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.runs import saved_records
from culturebench.evaluate.socialcc import prompts
from culturebench.evaluate.socialcc.config import Config
from culturebench.evaluate.socialcc.items import UNKNOWN, release_zones, zone_of


def read_transcripts(paths: Sequence[Path]) -> list[dict]:
    """The dialogues of transcripts.jsonl files (evaluate's output)."""
    records = []
    for path in map(Path, paths):
        before = len(records)
        required = ("scenario_id", "model", "turns", "fields")
        records.extend(record for _, record in saved_records.jsonl_records(path, required, what="transcripts file"))
        if len(records) == before:
            raise InputError("transcripts file has no records", file=path)
    return records


def rezone(records: Sequence[dict], scenarios: pl.DataFrame, config: Config) -> None:
    """Each transcript's zone looked up as ``evaluate`` does (``zone_of``: the release's zone by scenario id, then
    the config's), keeping its own where neither has one; and its commonsense country (Fig. 5) from the release
    where the transcript has none (transcripts written before they recorded it)."""
    zones = release_zones(scenarios)
    commonsense = dict(zip(scenarios["id"], scenarios["commonsense_country"]))
    for r in records:
        zone = zone_of(zones.get(str(r["scenario_id"])), r.get("country"), config)
        r["zone"] = zone if zone != UNKNOWN else r.get("zone") or UNKNOWN
        r["commonsense_country"] = r.get("commonsense_country") or commonsense.get(str(r["scenario_id"]))


def reparse(records: Sequence[dict]) -> None:
    """Every saved judgement's score and parse_status parsed again from its raw answer."""
    for r in records:
        for judge, j in (r.get("judgements") or {}).items():
            if judge in prompts.JUDGE_SCALES:
                parsed = prompts.parse_score(j.get("raw"), judge)
                j["score"], j["parse_status"] = parsed.score, parsed.status
                j.pop("status", None)
