"""Dataset cards: the release's README.md in the Hugging Face template, with the YAML that `load_dataset` reads.

The YAML ``configs`` list every config's ``data_files`` per split, so
``datasets.load_dataset("OUT/NAME", CONFIG, split="test")`` works on the local folder as on the Hub, and
``dataset_info`` declares the features derived from the written Arrow types.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import yaml

from culturebench.builders.base import CardInfo
from culturebench.words import counted
from culturebench.validation.report import ORIGIN_KEYS, rebuild_commands


SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"))
"""The Hub's ``size_categories`` buckets (dataset card metadata spec), by number of examples."""
LISTED_VALUES = 8
"""A categorical column's values are listed inline up to this many; longer lists are folded."""


def size_category(rows: int) -> str:
    for bound, label in SIZE_CATEGORIES:
        if rows < bound:
            return label
    return "n>1B"


def arrow_bytes(frame: pl.DataFrame) -> int:
    """A split's size in Arrow memory as ``datasets`` holds it (``dataset_info``'s ``num_bytes``), counted from the
    values as pyarrow's ``nbytes`` counts them: fixed-width data, 32-bit offsets plus UTF-8 bytes for text
    (Enum/Categorical load as text), offsets and children for lists, a validity bitmap where there are nulls. The
    same for the build's tables and for them read back from parquet, unlike polars' ``estimated_size``, which also
    counts the buffers a filtered frame still shares."""
    return sum(_series_bytes(frame.get_column(name)) for name in frame.columns)


def _series_bytes(series: pl.Series) -> int:
    n, dtype = series.len(), series.dtype
    validity = (n + 7) // 8 if series.null_count() else 0
    if isinstance(dtype, pl.Enum):  # each code's category length (no 20M-row cast to text)
        counts = series.to_physical().drop_nulls().value_counts(name="count")
        lengths = dtype.categories.str.len_bytes().cast(pl.Int64).gather(counts.get_column(series.name))
        return validity + 4 * n + int((lengths * counts.get_column("count")).sum())
    if isinstance(dtype, (pl.String, pl.Categorical)):
        return validity + 4 * n + int(series.cast(pl.String).str.len_bytes().sum() or 0)
    if isinstance(dtype, pl.List):
        return validity + 4 * n + _series_bytes(series.explode().drop_nulls())
    if isinstance(dtype, pl.Struct):
        return validity + sum(_series_bytes(field) for field in series.struct.unnest().iter_columns())
    if dtype == pl.Boolean:
        return validity + (n + 7) // 8
    return validity + n * _WIDTHS[series.to_physical().dtype]


_WIDTHS = {pl.Int8: 1, pl.UInt8: 1, pl.Int16: 2, pl.UInt16: 2, pl.Int32: 4, pl.UInt32: 4, pl.Float32: 4,
           pl.Int64: 8, pl.UInt64: 8, pl.Float64: 8, pl.Int128: 16}
"""Bytes per value of the physical (fixed-width) types."""


def card_metadata(card: CardInfo, tables: dict[str, dict[str, pl.DataFrame]]) -> dict:
    """The YAML header: the Hub's dataset card metadata plus ``configs`` (first one ``default``) and
    ``dataset_info`` that ``datasets.load_dataset`` reads."""
    header: dict = {"pretty_name": card.pretty_name, "language": list(card.language), "license": card.license}
    if card.license_name:
        header["license_name"] = card.license_name
    if card.license_link:
        header["license_link"] = card.license_link
    if card.license_details:
        header["license_details"] = card.license_details
    largest = max((sum(f.height for f in splits.values()) for splits in tables.values()), default=0)
    header |= {
        "multilinguality": "multilingual" if len(card.language) > 1 else "monolingual",
        "size_categories": [size_category(largest)],
        "source_datasets": list(card.source_datasets),
        "task_categories": list(card.task_categories),
        "annotations_creators": list(card.annotations_creators),
        "tags": list(card.tags),
        "configs": [
            {"config_name": config,
             **({"default": True} if index == 0 else {}),
             "data_files": [{"split": split, "path": f"data/{config}/{split}-*.parquet"} for split in splits]}
            for index, (config, splits) in enumerate(tables.items())
        ],
        "dataset_info": [
            {
                "config_name": config,
                "features": features_yaml(next(iter(splits.values()))),
                "splits": [{"name": split, "num_bytes": arrow_bytes(frame), "num_examples": frame.height}
                           for split, frame in splits.items()],
            }
            for config, splits in tables.items()
        ],
    }
    return header


def render_card(card: CardInfo, tables: dict[str, dict[str, pl.DataFrame]], manifest: dict) -> str:
    benchmark = manifest["benchmark"]
    described = {c.name: c for c in card.configs}
    config_lines = "\n".join(
        f"- **{config}** ({', '.join(f'{split}: {frame.height:,}' for split, frame in splits.items())} rows; "
        f"{'redistributable' if described[config].redistributable else '**not redistributable**'}): {described[config].description}"
        for config, splits in tables.items()
    )
    field_tables = "\n\n".join(f"#### `{config}`\n\n{_folded(fields_table(frame), f'{frame.width} fields')}"
                               for config, splits in tables.items() for frame in [next(iter(splits.values()))])
    first, first_splits = next(iter(tables.items()))
    first_split = next(iter(first_splits))
    inputs = "\n".join(f"| `{i['name']}` | {i['size']:,} | {i['rows']:,} | `{i['sha256']}` |" for i in manifest["inputs"])
    acc = manifest["accounting"]
    quarantine = ", ".join(f"{rule}: {n:,}" for rule, n in acc["quarantined_by_rule"].items()) or "none"
    v = manifest["validation"]
    n_informational = v.get("informational") or 0
    informational = (f" ({counted(n_informational, 'further reported numbers')} "
                     f"{'is' if n_informational == 1 else 'are'} not counted)" if n_informational else "")
    origin = {key: manifest.get(key) for key in ORIGIN_KEYS}
    recipe = "\n".join(rebuild_commands(benchmark, manifest["seed"], manifest["inputs"], origin))
    commit = (origin.get("source_commit") or {}).get("commit")
    built_by = f"culturebench {manifest['culturebench_version']}" + (f" (git commit `{commit}`)" if commit else "")
    return f"""---
{yaml.safe_dump(card_metadata(card, tables), sort_keys=False, allow_unicode=True, width=1000)}---

# {card.pretty_name}
{SAMPLE_NOTE if manifest.get("bundled_sample") else ""}
## Dataset Summary

{card.summary}{rebuilt_from(card, manifest)}
{changes_section(manifest)}
## Dataset Structure

### Configs and splits

{config_lines}

### Data Fields

Types as `datasets` loads them (`datasets.Features`).

{field_tables}

### Loading

{loading_example(f"releases/{benchmark}", first, first_split,
                 f"`releases/{benchmark}` is the folder `culturebench build {benchmark}` writes (its default `--out "
                 "releases`), relative to where it ran; any config and split listed above loads the same way.")}
## Dataset Creation

{card.creation}

### Source data and provenance

Built by {built_by} with seed {manifest['seed']} from these raw inputs:

| file | bytes | rows | sha256 |
|---|---|---|---|
{inputs}

Rows read: {acc['rows_read']:,} = kept {acc['rows_kept']:,} + quarantined {acc['rows_quarantined']:,} ({quarantine}).
Quarantined rows are in `quarantine/` with a `reason` column. Validation: {v['passed']} of {v['checks']} checks passed{informational}
(`validation/report.html`). `manifest.json` lists every output file with its sha256. `croissant.json` describes the
release in Croissant 1.1 with the Responsible AI fields (every data file with the same sha256, a record set per config;
`mlcroissant` reads it); `culturebench validate` and `audit` check it against the files.

Rebuild and audit:

```bash
{recipe}
```

## Considerations for Using the Data

{card.considerations}

## Licensing Information

{licensing(card)}

## Citation Information

```bibtex
{card.citation}
```
"""


def changes_section(manifest: dict) -> str:
    """"Changes since OLD's version" (``build --previous OLD``: ``release_diff.manifest_summary`` in the manifest),
    or "" without one."""
    changes = manifest.get("changes")
    if not changes:
        return ""
    previous = changes["previous"]
    lines = "\n".join(f"- {line}" for line in changes["lines"])
    return f"""
## Changes since {previous['release']}'s version

Compared with the release built {previous['created_at']} (manifest sha256 `{previous['manifest_sha256']}`), rows
matched on each config's key columns (`culturebench diff` gives every detail):

{lines}
"""


def loading_example(path: str, config: str, split: str, note: str) -> str:
    """The card's runnable loading example (``publish`` rewrites it for the Hub repo)."""
    return f"""```python
from datasets import load_dataset

{config} = load_dataset("{path}", "{config}", split="{split}")
```

{note}
"""


def rebuilt_from(card: CardInfo, manifest: dict) -> str:
    """The summary's last sentence: what this release was rebuilt from, the bundled sample's rows when it was
    built from them (never the publishers' files, which the sample is not)."""
    if manifest.get("bundled_sample"):
        return (" This release was rebuilt by culturebench from the bundled synthetic sample (`raw/`), not from the "
                "publishers' files: its rows and counts are the sample's, not the benchmark's.")
    return f" This release was rebuilt by culturebench from {card.rebuilt_from}." if card.rebuilt_from else ""


SAMPLE_NOTE = """
> **Built from the bundled synthetic sample.** Every raw input is the sample shipped in culturebench's `raw/`
> (written by `scripts/make_sample_*.py`: synthetic respondents, our own text). The rows exercise the pipeline; they
> are not the benchmark's data. Build from the publishers' files for real use.
"""


def licensing(card: CardInfo) -> str:
    """The license line (with ``license_name``/``license_link`` for ``other``), the card's license details, and
    which configs may be redistributed, in one sentence with the right number."""
    terms = card.license + (f" ({card.license_name}" + (f", {card.license_link}" if card.license_link else "") + ")"
                            if card.license_name else "")
    lines = [f"License: `{terms}`." + (f" {card.license_details}" if card.license_details else "")]
    withheld = [c.name for c in card.configs if not c.redistributable]
    if withheld:
        names = _join(f"`{c}`" for c in withheld)
        lines.append(f"The {'config' if len(withheld) == 1 else 'configs'} {names} "
                     f"{'contains' if len(withheld) == 1 else 'contain'} data whose source terms forbid redistribution: "
                     f"{'it is' if len(withheld) == 1 else 'they are'} for local use, and `culturebench publish` "
                     f"withholds {'it' if len(withheld) == 1 else 'them'} from a public upload.")
    return "\n\n".join(lines)


FOLDED_FIELDS = 20
"""A config with more fields than this has its field table folded (``<details>``)."""


def _folded(table: str, label: str) -> str:
    return table if table.count("\n") - 1 <= FOLDED_FIELDS else f"<details><summary>{label}</summary>\n\n{table}\n\n</details>"


def _join(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def fields_table(frame: pl.DataFrame) -> str:
    """A config's columns with their `datasets` feature type (``Value('string')``, ``List(Value('int64'))``); a
    categorical column lists its values, folded (``<details>``) when there are more than LISTED_VALUES."""
    from datasets import Features

    features = Features._from_yaml_list(features_yaml(frame))
    rows = []
    for name, feature in features.items():
        dtype = frame.schema[name]
        values = ""
        if isinstance(dtype, pl.Enum):
            categories = [str(c) for c in dtype.categories]
            listed = ", ".join(f"`{c}`" for c in categories)
            values = (f"one of: {listed}" if len(categories) <= LISTED_VALUES else
                      f"<details><summary>one of {len(categories)} values</summary>{listed}</details>")
        rows.append((f"`{name}`", f"`{feature!r}`", values))
    if not any(values for *_, values in rows):
        return "| field | type |\n|---|---|\n" + "\n".join(f"| {name} | {kind} |" for name, kind, _ in rows)
    return "| field | type | values |\n|---|---|---|\n" + "\n".join(f"| {' | '.join(row)} |" for row in rows)


def features_yaml(frame: pl.DataFrame) -> list[dict]:
    """`dataset_info.features` for a frame, in the YAML form `datasets` reads (``Features._from_yaml_list``)."""
    return [_feature(field.name, _plain(field.type)) for field in frame.head(0).to_arrow().schema]


def _plain(kind: pa.DataType) -> pa.DataType:
    """The Arrow type `datasets` sees in our parquet (no stored Arrow schema: large/view types read as plain)."""
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind) or pa.types.is_dictionary(kind):
        return pa.string()
    if pa.types.is_large_list(kind) or pa.types.is_list(kind):
        return pa.list_(_plain(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _plain(f.type)) for f in kind])
    return kind


def _feature(name: str | None, kind: pa.DataType) -> dict:
    entry: dict = {} if name is None else {"name": name}
    if pa.types.is_list(kind):
        value = kind.value_type
        entry["list"] = [_feature(f.name, f.type) for f in value] if pa.types.is_struct(value) else _feature(None, value)["dtype"]
    elif pa.types.is_struct(kind):
        entry["struct"] = [_feature(f.name, f.type) for f in kind]
    else:
        entry["dtype"] = _DTYPES.get(str(kind), str(kind))
    return entry


_DTYPES = {"string": "string", "bool": "bool", "double": "float64", "float": "float32"}
