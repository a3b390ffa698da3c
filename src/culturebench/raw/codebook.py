"""The WVS-7 codebook: variable -> title, question text, answer choices (with negative missing codes), page.

Two sources give the same :class:`Codebook`: the official *Codebook Variables report* PDF (parsed with
pdfplumber in :mod:`culturebench.raw.codebook_pdf`, cached by the PDF's sha256) and a JSON file of the shape
written by :meth:`Codebook.to_json` (the bundled sample uses one we wrote).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from culturebench.errors import InputError
from culturebench.io import InputFile, decode_text, input_name, sha256_file

CODEBOOK_JSON_FORMAT = "culturebench.wvs-codebook/1"


@dataclass(frozen=True)
class Variable:
    """One codebook entry, e.g. ``Q46 Feeling of happiness``."""

    name: str
    title: str
    question: str = ""
    choices: dict[int, str] = field(default_factory=dict)
    page: int | None = None

    def valid_choices(self) -> dict[int, str]:
        """Choices with non-negative codes (negative codes are the survey's missing-value codes)."""
        return {code: label for code, label in self.choices.items() if code >= 0}


@dataclass(frozen=True)
class Codebook:
    variables: dict[str, Variable]
    source: str = ""
    sha256: str = ""

    def __getitem__(self, name: str) -> Variable:
        return self.variables[name]

    def __contains__(self, name: object) -> bool:
        return name in self.variables

    def to_json(self) -> dict:
        return {
            "format": CODEBOOK_JSON_FORMAT,
            "variables": {
                name: {
                    "title": v.title,
                    "question": v.question,
                    "choices": {str(code): label for code, label in v.choices.items()},
                    "page": v.page,
                }
                for name, v in self.variables.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict, source: str = "", sha256: str = "") -> "Codebook":
        if not isinstance(data, dict) or not isinstance(data.get("variables"), dict):
            raise InputError("not a codebook JSON (expected an object with a 'variables' object)", file=source)
        variables = {}
        for name, entry in data["variables"].items():
            try:
                choices = {int(code): str(label) for code, label in entry.get("choices", {}).items()}
                variables[name] = Variable(
                    name=name,
                    title=str(entry.get("title", "")),
                    question=str(entry.get("question", "")),
                    choices=choices,
                    page=entry.get("page"),
                )
            except (AttributeError, TypeError, ValueError) as exc:
                raise InputError(f"malformed codebook entry ({exc})", file=source, column=name) from None
        return cls(variables=variables, source=source, sha256=sha256)


def find_codebook(folder: Path) -> Path:
    """The codebook in a raw folder: a ``*Codebook_Variables_report*.pdf`` or else ``codebook.json``."""
    pdfs = sorted(folder.glob("*Codebook_Variables_report*.pdf"))
    if pdfs:
        return pdfs[-1]
    json_path = folder / "codebook.json"
    if json_path.exists():
        return json_path
    raise InputError(
        "no codebook found: expected the WVS-7 'Codebook Variables report' PDF "
        "(F000*Codebook_Variables_report*.pdf) or a codebook.json",
        file=folder,
    )


def load_codebook(path: Path, cache_dir: Path | None = None) -> Codebook:
    """Load a codebook from a PDF (parsed once, cached as JSON under ``cache_dir`` by sha256) or a JSON file."""
    path = Path(path)
    if not path.is_file():
        raise InputError("codebook file not found", file=path)
    digest = sha256_file(path)
    if path.suffix.lower() == ".json":
        text, _ = decode_text(path.read_bytes(), str(path))
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"codebook JSON does not parse ({exc})", file=path) from None
        return Codebook.from_json(data, source=str(path), sha256=digest)
    if path.suffix.lower() != ".pdf":
        raise InputError("codebook must be a .pdf or .json file", file=path)
    cached = Path(cache_dir) / f"codebook-{digest}.json" if cache_dir else None
    if cached is not None and cached.exists():
        return Codebook.from_json(json.loads(cached.read_text(encoding="utf-8")), source=str(path), sha256=digest)
    from culturebench.raw.codebook_pdf import parse_codebook_pdf

    codebook = parse_codebook_pdf(path)
    codebook = Codebook(variables=codebook.variables, source=str(path), sha256=digest)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        tmp.write_text(json.dumps(codebook.to_json(), ensure_ascii=False), encoding="utf-8")
        tmp.replace(cached)
    return codebook


def codebook_input(path: Path, codebook: Codebook, raw: Path) -> InputFile:
    """The codebook file as a manifest input (rows = variables read)."""
    return InputFile(path=path, name=input_name(path, raw), sha256=codebook.sha256, size=path.stat().st_size,
                     rows=len(codebook.variables))
