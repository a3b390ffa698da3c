"""The toy benchmark's builder: raw/toy/questions.csv -> the ``questions`` config (one test split)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from culturebench.builders.base import BuildOutput, CardInfo, ConfigInfo
from culturebench.io import InputFile

NAME = "toy"
STAGES = ("read",)
CARD = CardInfo(pretty_name="Toy", summary="Yes / no questions (a test benchmark).", license="cc-by-4.0",
                citation="@misc{toy, title={Toy}, year={2026}}",
                configs=(ConfigInfo("questions", "One yes / no question per row with its gold answer."),),
                creation="Written by hand for culturebench's tests.", considerations="None: a test benchmark.")


def raw_present(raw: Path) -> bool:
    return (Path(raw) / "toy" / "questions.csv").is_file()


def build(raw: Path, seed: int, progress) -> BuildOutput:
    progress("read")
    path = Path(raw) / "toy" / "questions.csv"
    data = path.read_bytes()
    frame = pl.read_csv(data)
    return BuildOutput(tables={"questions": {"test": frame}}, quarantine={},
                       inputs=[InputFile.from_bytes(path, "toy/questions.csv", data, frame.height, "utf-8")],
                       rows_read=frame.height, rows_kept=frame.height)


def checks(tables) -> list:
    return []
