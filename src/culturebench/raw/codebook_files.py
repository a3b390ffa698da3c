"""A raw folder's WVS-7 codebook file: where it is, read as a :class:`~culturebench.raw.codebook.Codebook` (the
PDF parsed by :mod:`culturebench.raw.codebook_pdf` once and cached by sha256, or a codebook JSON), and its manifest
input."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from culturebench.errors import InputError
from culturebench.io import InputFile, decode_text, input_name, sha256_file
from culturebench.raw.codebook import Codebook


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
    """Load a codebook from a PDF (parsed once, cached as JSON under ``cache_dir`` by sha256) or a JSON file. A parse
    says so in one line on stderr, with the time it took (a cached codebook says nothing)."""
    with reading_codebook(path, cache_dir) as codebook:
        return codebook()


@contextlib.contextmanager
def reading_codebook(path: Path, cache_dir: Path | None = None) -> Iterator[Callable[[], Codebook]]:
    """:func:`load_codebook` begun now and finished by the function this yields: a PDF that is not in the cache has
    its page readers started at once, so that what the block does before it calls the function (a build reads its
    respondents) overlaps the parse; leaving the block stops readers still running."""
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
        yield functools.partial(Codebook.from_json, data, source=str(path), sha256=digest)
        return
    if path.suffix.lower() != ".pdf":
        raise InputError("codebook must be a .pdf or .json file", file=path)
    cached = Path(cache_dir) / f"codebook-{digest}.json" if cache_dir else None
    if cached is not None and cached.exists():
        data = json.loads(cached.read_text(encoding="utf-8"))
        yield functools.partial(Codebook.from_json, data, source=str(path), sha256=digest)
        return
    from culturebench.raw import codebook_pdf

    start = time.perf_counter()
    with contextlib.closing(codebook_pdf.CodebookParse(path)) as parse:

        @functools.cache
        def parsed() -> Codebook:
            codebook = Codebook(variables=parse.codebook().variables, source=str(path), sha256=digest)
            print(f"codebook: parsed {path.name} ({len(codebook.variables)} variables) in "
                  f"{time.perf_counter() - start:.1f} s" + ("; cached for the next build" if cached is not None else ""),
                  file=sys.stderr, flush=True)
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                tmp = cached.with_suffix(".tmp")
                tmp.write_text(json.dumps(codebook.to_json(), ensure_ascii=False), encoding="utf-8")
                tmp.replace(cached)
            return codebook

        yield parsed


def codebook_input(path: Path, codebook: Codebook, raw: Path) -> InputFile:
    """The codebook file as a manifest input (rows = variables read)."""
    return InputFile(path=path, name=input_name(path, raw), sha256=codebook.sha256, size=path.stat().st_size,
                     rows=len(codebook.variables))
