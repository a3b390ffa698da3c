"""``croissant.json``: a release described in Croissant 1.1 (MLCommons) with the Responsible AI (RAI) vocabulary.

Written by every build from what the build already knows, never by hand:

- ``distribution``: a ``cr:FileObject`` per data file (``data/<config>/<split>-*.parquet``) with the sha256 that
  manifest.json records, and a local ``cr:FileSet`` per config that the config's record set reads;
- ``recordSet``: one per config, a field per parquet column typed from the file's Arrow schema (lists as
  ``isArray``, structs as ``subField``) and described from the pandera schema's checks; the record set from the
  card's config description;
- the RAI fields the benchmark states (``Benchmark.rai_facts()``: its ``rai_facts_file``, a file of ``facts/croissant_rai/`` for a built-in one;
  each fact is our own summary with the source it rests on: paper section, the authors' repository, or the
  release's own build; ``url`` is where the authors publish it; ``synthetic`` says which rows are generated: ``all``,
  or {config, column, values} (rows whose column holds one of values), or null), ``rai:hasSyntheticData`` from the
  rows themselves, ``rai:dataCollectionRawData`` from the manifest's inputs and the rebuild recipe in
  ``rai:dataPreprocessingProtocol``; ``citeAs``, ``license`` and ``creator`` from the card, ``version`` from the
  manifest.

A config whose source terms forbid redistribution (``culturebench publish`` withholds it from a public upload) is
described like the rest, with ``conditionsOfAccess`` saying it is not distributed. The same inputs give the same
bytes: no timestamp (``datePublished`` is the year of the benchmark's paper, from the card's citation).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from culturebench.builders.base import CardInfo, license_name
from culturebench.validation.report import ORIGIN_KEYS, rebuild_commands

if TYPE_CHECKING:
    from culturebench.contract import Benchmark

FILE = "croissant.json"
CONFORMS_TO = ["http://mlcommons.org/croissant/1.1", "http://mlcommons.org/croissant/RAI/1.0"]
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "annotation": "cr:annotation",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "excludes": "cr:excludes",
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "readLines": "cr:readLines",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sdVersion": "cr:sdVersion",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
    "unArchive": "cr:unArchive",
    "value": "cr:value",
}
"""The JSON-LD context of Croissant 1.1 (its spec's Appendix 1) with the few terms mlcroissant's own context adds
(path, repeated, replace, samplingRate), so that mlcroissant reads it as standard."""
PARQUET = "application/x-parquet"
RAI_TEXT = ("dataCollection", "dataAnnotationProtocol", "personalSensitiveInformation", "dataBiases",
            "dataLimitations", "dataUseCases", "dataSocialImpact", "dataReleaseMaintenancePlan")
"""The RAI facts each benchmark states (``Benchmark.rai_facts()``; plus dataCollectionType, a list of values)."""
UNSTATED = "not stated: the benchmark gives no Responsible-AI facts (its Benchmark.rai_facts())"


def stated_facts(benchmark: Benchmark) -> dict:
    """``benchmark.rai_facts()`` with every fact it does not give marked unstated (no url, no synthetic rows
    known, no collection type), so that a benchmark of another package needs none to build."""
    unstated = {"url": {"value": None, "source": UNSTATED}, "synthetic": None,
                "dataCollectionType": {"value": [], "source": UNSTATED},
                **{name: {"text": "Not stated", "source": UNSTATED} for name in RAI_TEXT}}
    return unstated | benchmark.rai_facts()
_INTEGERS = {pa.int8(): "cr:Int8", pa.int16(): "cr:Int16", pa.int32(): "cr:Int32", pa.int64(): "cr:Int64",
             pa.uint8(): "cr:UInt8", pa.uint16(): "cr:UInt16", pa.uint32(): "cr:UInt32", pa.uint64(): "cr:UInt64"}


def render(benchmark: Benchmark, card: CardInfo, manifest: dict, release: Path,
           tables: dict[str, dict[str, pl.DataFrame]]) -> str:
    """croissant.json of ``benchmark``'s release in ``release`` whose data files ``manifest["outputs"]`` lists (their
    parquet schemas are read from the files), as text."""
    return dumps(document(benchmark, card, manifest, parquet_schemas(release, manifest),
                          has_synthetic_rows(benchmark, manifest, tables)))


def dumps(document: dict) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def parquet_schemas(release: Path, manifest: dict) -> dict[str, pa.Schema]:
    """Per config, the Arrow schema of its first data file (every shard and split of a config has the same)."""
    schemas: dict[str, pa.Schema] = {}
    for output in sorted(data_outputs(manifest), key=lambda o: o["path"]):
        if output["config"] not in schemas:
            schemas[output["config"]] = pq.read_schema(Path(release) / output["path"])
    return schemas


def data_outputs(manifest: dict) -> list[dict]:
    return [o for o in manifest["outputs"] if "config" in o]


def has_synthetic_rows(benchmark: Benchmark, manifest: dict, tables: dict[str, dict[str, pl.DataFrame]]) -> bool:
    """``rai:hasSyntheticData``: a build from the bundled sample is synthetic throughout; otherwise the benchmark's
    ``synthetic`` fact says which rows are generated (``all``, or rows whose column holds one of some values)."""
    if manifest.get("bundled_sample"):
        return True
    rule = stated_facts(benchmark)["synthetic"]
    if rule is None or rule == "all":
        return rule == "all"
    return any(frame.get_column(rule["column"]).cast(pl.String).is_in(rule["values"]).any()
               for frame in tables.get(rule["config"], {}).values() if rule["column"] in frame.columns)


def document(benchmark: Benchmark, card: CardInfo, manifest: dict, schemas: dict[str, pa.Schema],
             synthetic: bool) -> dict:
    """The Croissant JSON-LD of a release: dataset-level and RAI fields, the distribution, a record set per config
    (configs in the card's order, ``schemas`` the parquet schema of each)."""
    name = manifest["benchmark"]
    facts = stated_facts(benchmark)
    restricted = not_distributed(benchmark, card)
    outputs = sorted(data_outputs(manifest), key=lambda o: o["path"])
    origin = {key: manifest.get(key) for key in ORIGIN_KEYS}
    recipe = "\n".join(rebuild_commands(name, manifest["seed"], manifest["inputs"], origin))
    acc = manifest["accounting"]
    described = {c.name: c for c in card.configs}
    doc: dict = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": card.pretty_name,
        "alternateName": name,
        "description": card.summary + (" Built from culturebench's bundled synthetic sample: the rows exercise the "
                                       "pipeline and are not the benchmark's data." if manifest.get("bundled_sample")
                                       else ""),
        "url": facts["url"]["value"],
        "creator": [{"@type": "sc:Person", "name": name} for name in citation_authors(card.citation)],
        "datePublished": citation_year(card.citation),
        "version": manifest["culturebench_version"],
        "license": license_value(card),
        "citeAs": card.citation,
        "keywords": list(card.tags),
        "inLanguage": list(card.language),
        "isLiveDataset": False,
    }
    if doc["url"] is None:
        del doc["url"]
    for name in RAI_TEXT:
        doc[f"rai:{name}"] = cited(facts[name])
    doc["rai:dataCollectionType"] = facts["dataCollectionType"]["value"]
    doc["rai:dataCollectionRawData"] = "The raw inputs of this build:\n" + "\n".join(
        f"{i['name']}: {i['size']:,} bytes, {i['rows']:,} rows, sha256 {i['sha256']}" for i in manifest["inputs"])
    doc["rai:dataPreprocessingProtocol"] = [
        card.creation,
        f"Rows read {acc['rows_read']:,} = kept {acc['rows_kept']:,} + quarantined {acc['rows_quarantined']:,} "
        "(quarantine/ in the release, with the reason of each row).",
        f"Rebuild with culturebench (seed {manifest['seed']}):\n{recipe}",
    ]
    doc["rai:hasSyntheticData"] = synthetic
    doc["distribution"] = [file_object(o, restricted.get(o["config"])) for o in outputs]
    configs = [c for c in described if c in schemas] + sorted(c for c in schemas if c not in described)
    doc["distribution"] += [file_set(config, restricted.get(config)) for config in configs]
    checks = column_checks(benchmark)
    doc["recordSet"] = [
        record_set(config, described.get(config), schemas[config], checks.get(config, {}), restricted.get(config),
                   rows_by_split(outputs, config))
        for config in configs
    ]
    return doc


def cited(fact: dict) -> str:
    return f"{fact['text']} (Source: {fact['source']}.)"


def not_distributed(benchmark: Benchmark, card: CardInfo) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Config -> (why it is not distributed, the columns withheld; empty: the whole config), for the configs whose
    source terms forbid redistribution, as ``culturebench publish`` withholds them from a public upload."""
    out = {}
    for config in card.configs:
        if config.redistributable:
            continue
        terms = license_name(benchmark.name, config)
        open_columns = benchmark.open_columns.get(config.name)
        if open_columns is not None:
            out[config.name] = (f"Column(s) {', '.join(open_columns.withheld)} not distributed: {open_columns.reason}; "
                                f"`culturebench publish` uploads the config without them.", open_columns.withheld)
        else:
            out[config.name] = (f"Not distributed: the source terms ({terms}) forbid redistribution; `culturebench "
                                "publish` withholds it from a public upload. Rebuild it locally (see "
                                "rai:dataPreprocessingProtocol).", ())
    return out


def rows_by_split(outputs: list[dict], config: str) -> dict[str, int]:
    rows: dict[str, int] = {}
    for output in outputs:
        if output["config"] == config:
            rows[output["split"]] = rows.get(output["split"], 0) + output.get("rows", 0)
    return rows


def file_object(output: dict, restricted: tuple[str, tuple[str, ...]] | None) -> dict:
    entry = {"@type": "cr:FileObject", "@id": output["path"], "name": output["path"],
             "description": f"Config {output['config']}, split {output['split']}: {output.get('rows', 0):,} rows.",
             "contentUrl": output["path"], "encodingFormat": PARQUET, "sha256": output["sha256"]}
    if restricted:
        entry["conditionsOfAccess"] = restricted[0]
    return entry


def file_set(config: str, restricted: tuple[str, tuple[str, ...]] | None) -> dict:
    entry = {"@type": "cr:FileSet", "@id": f"{config}-parquet", "name": f"{config}-parquet",
             "description": f"The parquet files of config {config} (every split), the FileObjects above.",
             "encodingFormat": PARQUET, "includes": f"data/{config}/*.parquet"}
    if restricted:
        entry["conditionsOfAccess"] = restricted[0]
    return entry


def record_set(config: str, info, schema: pa.Schema, checks: dict[str, str],
               restricted: tuple[str, tuple[str, ...]] | None, rows: dict[str, int]) -> dict:
    splits = ", ".join(f"{split}: {n:,}" for split, n in rows.items())
    entry = {"@type": "cr:RecordSet", "@id": config, "name": config,
             "description": f"{info.description if info else config} Rows by split: {splits}."}
    if restricted and not restricted[1]:
        entry["conditionsOfAccess"] = restricted[0]
    withheld = set(restricted[1]) if restricted else set()
    entry["field"] = [field(config, f"{config}-parquet", column, checks.get(column.name, ""),
                            restricted[0] if column.name in withheld else "") for column in schema]
    return entry


def field(parent_id: str, file_set_id: str, column: pa.Field, description: str, restricted: str,
          path: tuple[str, ...] = ()) -> dict:
    """The Field of a parquet column (``path`` empty) or of a struct member under it (jsonPath ``path``)."""
    kind, is_array = column.type, False
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        kind, is_array = kind.value_type, True
    entry: dict = {"@type": "cr:Field", "@id": f"{parent_id}/{column.name}", "name": column.name,
                   "description": " ".join(part for part in (type_text(column.type), description) if part)}
    if restricted:
        entry["conditionsOfAccess"] = restricted
    if not pa.types.is_struct(kind):
        entry["dataType"] = data_type(kind)
    source: dict = {"fileSet": {"@id": file_set_id}, "extract": {"column": path[0] if path else column.name}}
    if path:
        source["transform"] = {"jsonPath": ".".join([*path[1:], column.name])}
    entry["source"] = source
    if is_array:
        entry |= {"isArray": True, "arrayShape": "-1"}
    if pa.types.is_struct(kind):
        entry["subField"] = [field(entry["@id"], file_set_id, member, "", "", (*path, column.name)) for member in kind]
    return entry


def data_type(kind: pa.DataType) -> str:
    """The Croissant dataType of an Arrow type (text, boolean, sized integers and floats)."""
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind) \
            or pa.types.is_dictionary(kind):
        return "sc:Text"
    if pa.types.is_boolean(kind):
        return "sc:Boolean"
    if kind in _INTEGERS:
        return _INTEGERS[kind]
    if pa.types.is_float32(kind):
        return "cr:Float32"
    if pa.types.is_float64(kind):
        return "cr:Float64"
    raise ValueError(f"no Croissant dataType for Arrow type {kind}")


def type_text(kind: pa.DataType) -> str:
    """The parquet type as a reader sees it, e.g. ``list<struct<code: int16, label: string>>``."""
    return f"Parquet type {str(kind).replace('large_', '').replace('element: ', '')}."


def column_checks(benchmark: Benchmark) -> dict[str, dict[str, str]]:
    """Config -> column -> what its pandera schema requires, in words (e.g. ``Validated: never null; unique; one of:
    a, b.``)."""
    schemas = getattr(benchmark.schemas_module(), "SCHEMAS", {})
    return {config: {name: requirement_text(column) for name, column in schema.columns.items()}
            for config, schema in schemas.items()}


_CHECK_WORDS = {
    "isin": lambda s: "one of: " + ", ".join(str(v) for v in s["allowed_values"]),
    "str_matches": lambda s: f"matches the regular expression {s['pattern']}",
    "str_startswith": lambda s: f"starts with {s['string']!r}",
    "greater_than_or_equal_to": lambda s: f">= {s['min_value']}",
    "greater_than": lambda s: f"> {s['min_value']}",
    "less_than_or_equal_to": lambda s: f"<= {s['max_value']}",
    "less_than": lambda s: f"< {s['max_value']}",
    "in_range": lambda s: f"between {s['min_value']} and {s['max_value']}",
    "str_length": lambda s: (f"exactly {s['exact_value']} characters" if s.get("exact_value") is not None else
                             ("non-empty" if s["min_value"] == 1 else f"at least {s['min_value'] or 0} characters")
                             + (f", at most {s['max_value']} characters" if s.get("max_value") is not None else "")),
}


def requirement_text(column) -> str:
    """A pandera Column's nullability, uniqueness and checks in words."""
    parts = ["may be null" if column.nullable else "never null"]
    if column.unique:
        parts.append("unique")
    for check in column.checks:
        words = _CHECK_WORDS.get(check.name)
        parts.append(words(check.statistics) if words else (check.error or check.name))
    return f"Validated: {'; '.join(parts)}."


def citation_authors(citation: str) -> list[str]:
    """The authors of the card's first BibTeX entry, as "First Last"."""
    found = re.search(r"author\s*=\s*\{(.*?)\},?\n", citation)
    if not found:
        return []
    names = [name.strip() for name in found.group(1).split(" and ")]
    return [" ".join(reversed([part.strip() for part in name.split(",", 1)])) if "," in name else name
            for name in names]


def citation_year(citation: str) -> str | None:
    """The year of the card's first BibTeX entry (the benchmark's publication)."""
    found = re.search(r"year\s*=\s*\{?(\d{4})", citation)
    return found.group(1) if found else None


SPDX = {"cc-by-4.0": "https://spdx.org/licenses/CC-BY-4.0.html", "cc-by-sa-4.0": "https://spdx.org/licenses/CC-BY-SA-4.0.html",
        "mit": "https://spdx.org/licenses/MIT.html", "apache-2.0": "https://spdx.org/licenses/Apache-2.0.html"}
"""The Hub license ids our cards use, as the SPDX URLs Croissant recommends."""


def license_value(card: CardInfo) -> str | dict:
    """The card's license: an SPDX URL where it has one, else a CreativeWork with the card's name, link and
    details (``other``, ``unknown``)."""
    if card.license in SPDX and not card.license_details:
        return SPDX[card.license]
    work = {"@type": "sc:CreativeWork", "name": card.license_name or card.license}
    if card.license in SPDX:
        work["url"] = SPDX[card.license]
    elif card.license_link:
        work["url"] = card.license_link
    if card.license_details:
        work["description"] = card.license_details
    return work


def problems(release: Path, manifest: dict, digests: dict[str, str]) -> list[str]:
    """What ``validate`` and ``audit`` refuse in croissant.json, given the sha256 of each file as it is now
    (``digests``, by path): a FileObject whose sha256 is not the file's, one for a file the manifest does not list,
    a data file without a FileObject. Nothing for a release whose manifest lists no croissant.json (built before
    culturebench wrote one)."""
    listed = {o["path"] for o in manifest["outputs"]}
    path = Path(release) / FILE
    if FILE not in listed or not path.is_file():
        return []  # an older release, or missing (file_problems says so)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        objects = {o["contentUrl"]: o for o in doc.get("distribution", []) if o.get("@type") == "cr:FileObject"}
    except (ValueError, UnicodeDecodeError, TypeError, KeyError, AttributeError) as exc:
        return [f"{FILE}: not Croissant JSON-LD with a distribution of FileObjects ({exc})"]
    found = []
    for url, entry in sorted(objects.items()):
        if url not in listed:
            found.append(f"{FILE}, FileObject {url}: not a file manifest.json lists")
        elif url in digests and entry.get("sha256") != digests[url]:
            found.append(f"{FILE}, FileObject {url}: sha256 {str(entry.get('sha256'))[:16]}… but the file's is "
                         f"{digests[url][:16]}…")
    found += [f"{FILE}: no FileObject for {o['path']}" for o in data_outputs(manifest) if o["path"] not in objects]
    return found


def hub_document(text: str, replaced: dict[str, str], withheld_columns: dict[str, tuple[str, ...]]) -> str:
    """croissant.json as uploaded by ``publish``: files it uploads without some columns get the sha256 of the
    uploaded bytes (``replaced``, by path) and their record set loses those fields."""
    doc = json.loads(text)
    for entry in doc["distribution"]:
        if entry.get("contentUrl") in replaced:
            entry["sha256"] = replaced[entry["contentUrl"]]
    for record_set_entry in doc["recordSet"]:
        dropped = set(withheld_columns.get(record_set_entry["@id"], ()))
        record_set_entry["field"] = [f for f in record_set_entry["field"] if f["name"] not in dropped]
    return dumps(doc)
