"""The WVS-7 codebook: variable -> title, question text, answer choices (with negative missing codes), page.

Two sources give the same :class:`Codebook`: the official *Codebook Variables report* PDF (parsed with
PDFium in :mod:`culturebench.raw.codebook_pdf`, cached by the PDF's sha256) and a JSON file of the shape
written by :meth:`Codebook.to_json` (the bundled sample uses one we wrote); :mod:`culturebench.raw.codebook_files`
finds and loads either.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from culturebench.errors import InputError

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
