"""WorldValuesBench items: the release's configs read lazily (``pl.scan_parquet``), the evaluated rows of a
split or the probe (Sec. 3.1) with the ``--limit`` spread, and the tables the prompts and the scoring need."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import runs
from culturebench.evaluate.limit import Coverage, limit_scan
from culturebench.release import load_manifest

PROBE_DIMENSIONS = ("continent", "urban_rural", "education_level")
SPLITS = ("probe", "train", "validation", "test")
"""``--split``: the probe (the ``probe`` config, Sec. 3.1) or every example of a split of the ``examples`` config."""



def question_order(question_id: str) -> tuple:
    """Natural order of question ids: Q2 before Q10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", question_id))


def _paths(release: Path, manifest: dict, config: str) -> list[Path]:
    paths = [Path(release) / o["path"] for o in manifest["outputs"] if o.get("config") == config]
    for path in paths:
        if not path.is_file():
            raise InputError("file listed in manifest.json is missing", file=path)
    return paths


def _scan(release: Path, manifest: dict, config: str) -> pl.LazyFrame:
    paths = _paths(release, manifest, config)
    if not paths:
        raise InputError(f"release has no {config!r} config", file=release)
    return pl.scan_parquet(paths)


def _collect(frame: pl.LazyFrame, release: Path, config: str) -> pl.DataFrame:
    try:
        return frame.collect(engine="streaming")
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{config} parquet files cannot be read ({str(exc).splitlines()[0]})", file=release) from None


def release_rows(release: Path, answered: pl.LazyFrame) -> dict[str, pl.DataFrame]:
    """The release rows the scoring needs: questions (scales), the examples of the ``answered`` (participant_id,
    question_id) pairs (a filter on the pairs while the scan streams, so the rest of the split is never held; a
    semi-join held 2.3x the memory), and the participants and probe rows of their participants."""
    release = Path(release)
    manifest = load_manifest(release)
    if manifest.get("benchmark") != "wvb":
        raise InputError(f"not a WorldValuesBench release (benchmark {manifest.get('benchmark')!r})", file=release)
    answered = (answered.select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.Categorical))
                .drop_nulls("participant_id").collect())  # the answers are read once, for both filters
    ids = answered["participant_id"].unique().implode()
    pair = pl.struct("participant_id", "question_id")
    wanted = answered.select(pair.alias("pair"))["pair"].implode()
    questions = _collect(_scan(release, manifest, "questions").select(
        "question_id", "kind", pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64)), release, "questions")
    examples = _collect(_scan(release, manifest, "examples")
                        .select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.Categorical),
                                pl.col("answer").cast(pl.Int64).alias("human"))
                        .filter(pair.is_in(wanted)), release, "examples")
    participants = _collect(_scan(release, manifest, "participants")
                            .filter(pl.col("participant_id").is_in(ids))
                            .select(pl.col("participant_id").cast(pl.Int64), pl.col("continent").cast(pl.String),
                                    pl.col("H_URBRURAL").cast(pl.String).alias("urban_rural")), release, "participants")
    probe_paths = _paths(release, manifest, "probe")
    if probe_paths:
        probe = _collect(pl.scan_parquet(probe_paths).filter(pl.col("participant_id").is_in(ids))
                         .select(pl.col("participant_id").cast(pl.Int64), *(pl.col(c).cast(pl.String) for c in PROBE_DIMENSIONS))
                         .unique("participant_id", keep="first", maintain_order=True), release, "probe")
    else:
        probe = pl.DataFrame(schema={"participant_id": pl.Int64, **{c: pl.String for c in PROBE_DIMENSIONS}})
    return {"questions": questions, "examples": examples, "participants": participants, "probe": probe}


def release_routes(release: Path) -> dict:
    """Which files built the release's question texts and probe (manifest provenance ``routes``, see
    ``builders.wvb.ROUTES``): recorded in metrics.json and run.json, since prompts and probe depend on them."""
    return load_manifest(Path(release)).get("provenance", {}).get("routes", {})



def check_inputs(release: Path, split: str = "probe", limit: int | None = None) -> dict:
    """Cheap checks of the user's choices before a backend is started; the release's manifest."""
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    runs.check_at_least_one({"--limit": limit})
    if not Path(release).is_dir():
        raise InputError("release folder not found (build it with: culturebench build wvb)", file=release)
    manifest = load_manifest(release)
    if manifest.get("benchmark") != "wvb":
        raise InputError(f"not a WorldValuesBench release (benchmark {manifest.get('benchmark')!r})", file=release)
    return manifest


def evaluation_rows(release: Path, split: str = "probe", limit: int | None = None,
                    seed: int | None = 0) -> pl.DataFrame:
    """The evaluated rows, in release order: participant_id, question_id, human (the participant's answer). The
    probe config for ``probe`` (question-major), else the split's examples; ``limit`` rows spread over the questions
    when given (``limit.spread_positions`` with ``seed``)."""
    return limited_rows(release, split, limit, seed)[0]


def limited_rows(release: Path, split: str = "probe", limit: int | None = None,
                 seed: int | None = 0) -> tuple[pl.DataFrame, Coverage]:
    """``evaluation_rows`` and what they cover (questions asked, rows per question)."""
    release = Path(release)
    manifest = check_inputs(release, split, limit)
    if split == "probe":
        frame = _scan(release, manifest, "probe")
    else:
        frame = _scan(release, manifest, "examples").filter(pl.col("split").cast(pl.String) == split)
    frame = frame.select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                         pl.col("answer").cast(pl.Int64).alias("human"))
    rows, covers = limit_scan(frame, ["question_id"], limit, seed, item="rows", columns=["questions"],
                              collect=lambda query: _collect(query, release, split))
    if covers.available == 0:
        raise InputError(f"the release has no {split} rows", file=release)
    return rows, covers


def prompt_tables(release: Path, participant_ids: pl.Series | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The questions config (question_id, kind, text, scale_min, scale_max) and the demographics of the given
    participants (participant_id + DEMOGRAPHIC_VARIABLES, codebook text) from a WVB release."""
    from culturebench.evaluate.wvb.prompts import DEMOGRAPHIC_VARIABLES

    release = Path(release)
    manifest = load_manifest(release)
    questions = _collect(_scan(release, manifest, "questions").select(
        pl.col("question_id").cast(pl.String), pl.col("kind").cast(pl.String), pl.col("text").cast(pl.String),
        pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64)), release, "questions")
    schema = {"participant_id": pl.Int64, **{v: pl.String for v in DEMOGRAPHIC_VARIABLES}}
    if participant_ids is None:
        return questions, pl.DataFrame(schema=schema)
    participants = _collect(_scan(release, manifest, "participants")
                            .filter(pl.col("participant_id").is_in(participant_ids.unique().implode()))
                            .select(pl.col("participant_id").cast(pl.Int64),
                                    *(pl.col(v).cast(pl.String) for v in DEMOGRAPHIC_VARIABLES)), release, "participants")
    return questions, participants
