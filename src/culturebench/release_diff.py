"""What changed between two releases of one benchmark: ``culturebench diff OLD NEW``, the "Changes since" section
``build --previous`` writes into a card, and what ``publish`` shows before it uploads.

Rows are matched per config and split on the config's key columns, which the benchmark's schemas module declares
(``KEYS``), with lazy polars joins (anti joins for rows added and removed, an inner join for rows changed, counted per
column): the files are scanned, never loaded whole, and no Python loop touches a row. What the benchmark's scores
depend on comes from its contract (``Benchmark.score_inputs``: small count tables) and is compared group by group:
a distribution over an ordinal answer by the Wasserstein-1 distance on the answers rescaled to [0, 1], any other distribution by the total variation distance of its shares. The card, the
licence, the provenance (inputs, seed, versions) and the validation report's checks are compared as well.

A release given as ``ORG/NAME[@REVISION]`` is a verified Hub snapshot (``hub_release``); the configs and columns its
upload withheld on purpose are not compared (and said so), nor is its card with a local one (the Hub's is rewritten).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import yaml

from culturebench.errors import InputError, excerpt
from culturebench.io import atomic_directory, sha256_file, write_json
from culturebench.release_reader import Manifest, Release

EXAMPLES = 3
"""Examples kept per kind of change (rows added, removed, changed in a column)."""
TOP_GROUPS = 10
"""Groups listed per score input (the largest changes first)."""
EXCERPT = 60
"""Characters of a value an example quotes."""
TOLERANCE = 1e-12
"""A distance at most this is no change (float sums of equal shares)."""
OLD = "__old"
NEW = "__new"


def open_release(value: str | Path) -> Release:
    """``value`` (a folder, or ``ORG/NAME[@REVISION]``: ``Release.open``) as ``validate`` reads it, its files checked
    against its manifest.json: a damaged release is an InputError."""
    from culturebench.manifest import MANIFEST_KEYS, UNLISTED

    release = Release.open(value, required=MANIFEST_KEYS)
    if not release.hub:  # a Hub snapshot is verified as it is fetched
        release.verify(remedy="rebuild or re-download it")
        if unlisted := release.unlisted():
            raise InputError(f"{UNLISTED} ({len(unlisted)} file(s)), so load_dataset would read a release other than "
                             "the one its manifest and card describe; remove it or rebuild the release",
                             file=release.folder / unlisted[0])
    check_readable(release)
    return release


def check_readable(release: Release) -> None:
    """Every parquet file of ``release`` a diff reads opens as parquet, and its card and validation report decode
    as UTF-8 (a manifest rewritten to match a damaged file passes the hash check): else an InputError naming the
    file."""
    import pyarrow.parquet as pq

    for output in release.manifest.outputs:
        path = release.folder / output.path
        if path.suffix == ".parquet" and output.config not in release.withheld_configs and path.is_file():
            try:
                pq.read_metadata(path)
            except (OSError, ValueError) as exc:
                raise InputError(f"not a readable parquet file ({str(exc).splitlines()[0]})", file=path) from None
    for name in ("README.md", "validation/report.json"):
        read_text(release.folder / name)


def read_text(path: Path) -> str:
    """A release's text file ("" when absent); bytes that are not UTF-8 are an InputError naming the file and byte."""
    if not path.is_file():
        return ""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start}: {exc.object[exc.start:exc.start + 1]!r})",
                         file=path) from None


def diff(old: Release, new: Release) -> dict:
    """Everything that differs from ``old`` to ``new`` (JSON-ready): tables, score inputs, card, licence,
    provenance and validation. Releases of two benchmarks are an InputError."""
    name = new.manifest.benchmark
    if old.manifest.benchmark != name:
        raise InputError(f"{old.label} is a release of {old.manifest.benchmark!r} and {new.label} of {name!r}; "
                         "diff compares two releases of one benchmark")
    benchmark = new.benchmark
    keys = getattr(benchmark.schemas_module(), "KEYS", {})
    old_tables, new_tables = old.tables(), new.tables()
    withheld = sorted((old.withheld_configs | new.withheld_configs) & (set(old_tables) | set(new_tables)
                      | set(new.manifest.configs)))
    configs = {"added": sorted(set(new_tables) - set(old_tables) - old.withheld_configs),
               "removed": sorted(set(old_tables) - set(new_tables) - new.withheld_configs),
               "not_compared": withheld}
    tables = []
    for config in [c for c in new_tables if c in old_tables]:
        if config not in keys:
            raise InputError(f"{name}'s schemas declare no key columns for config {config!r} (KEYS)")
        hidden = old.withheld_columns.get(config, set()) | new.withheld_columns.get(config, set())
        splits = new_tables[config].keys() | old_tables[config].keys()
        for split in sorted(splits):
            if split not in old_tables[config] or split not in new_tables[config]:
                tables.append({"config": config, "split": split,
                               "split_added" if split not in old_tables[config] else "split_removed": True})
                continue
            with readable(config, split, old, new):
                tables.append({"config": config, "split": split, **table_diff(
                    old_tables[config][split], new_tables[config][split], keys[config], hidden, (old.label, new.label))})
    result = {
        "benchmark": name,
        "old": describe(old), "new": describe(new),
        "configs": configs,
        "tables": tables,
        "score_inputs": score_diff(benchmark, old_tables, new_tables, set(withheld), (old, new)),
        "card": card_diff(old, new),
        "licence": licence_diff(old, new),
        "provenance": provenance_diff(old.manifest.data, new.manifest.data),
        "validation": validation_diff(old.folder, new.folder),
    }
    result["changed"] = is_changed(result)
    return result


@contextmanager
def readable(config: str, split: str | None, old: Release, new: Release) -> Iterator[None]:
    """A parquet file of ``config`` that opened but cannot be read (a damaged page or column) is an InputError
    naming the config and both releases' folders, never a traceback."""
    try:
        yield
    except pl.exceptions.ColumnNotFoundError:
        raise
    except pl.exceptions.PolarsError as exc:
        where = f"{config}/{split}" if split else config
        raise InputError(f"{where} cannot be read from {old.label} or {new.label} "
                         f"({str(exc).splitlines()[0]}); validate both releases") from None


def describe(release: Release) -> dict:
    path = release.folder / "manifest.json"
    return {"release": release.label, "created_at": release.manifest.created_at,
            "manifest_sha256": sha256_file(path) if path.is_file() else None,
            "rows": sum(o.rows or 0 for o in release.manifest.outputs if o.config is not None)}


# ------------------------------------------------------------------------------------------------------- tables


def table_diff(old: pl.LazyFrame, new: pl.LazyFrame, key: tuple[str, ...], hidden: set[str],
               labels: tuple[str, str]) -> dict:
    """Rows added, removed and changed (per column, with examples) of one config split, matched on ``key``; and
    its columns added, removed and retyped. ``hidden`` columns (withheld from a Hub upload) are not compared.

    One full join on the key, aggregated as it streams (polars' streaming engine): string columns are joined and
    compared as Categorical (one copy of each distinct value), which halves the join's memory on a survey release's millions of answers."""
    old_schema, new_schema = old.collect_schema(), new.collect_schema()
    for label, schema in zip(labels, (old_schema, new_schema)):
        if missing := [k for k in key if k not in schema]:
            raise InputError(f"{label}: has no key column {', '.join(missing)} (its schemas' KEYS)")
    common = [c for c in new_schema if c in old_schema and c not in hidden]
    retyped = [c for c in common if old_schema[c] != new_schema[c]]
    compared = [c for c in common if c not in key and c not in retyped]
    key = list(key)
    strings = [pl.col(c).cast(pl.Categorical) for c in (*key, *compared) if new_schema[c] == pl.String]
    joined = (new.select(*key, *compared).with_columns(*strings, pl.lit(True).alias(NEW))
              .join(old.select(*key, *compared).with_columns(*strings, pl.lit(True).alias(OLD)), on=key, how="full",
                    coalesce=True, suffix=OLD))
    both = pl.col(NEW).is_not_null() & pl.col(OLD).is_not_null()
    flags = {c: both & pl.col(c).ne_missing(pl.col(c + OLD)) for c in compared}
    as_text = [pl.col(k).cast(pl.String) if new_schema[k] == pl.String else pl.col(k) for k in key]

    def first(rows: pl.Expr, *columns: pl.Expr) -> pl.Expr:  # the first EXAMPLES rows by key, as structs
        return (pl.struct(*as_text, *columns).filter(rows).sort_by(*[k.filter(rows) for k in as_text])
                .head(EXAMPLES).implode())

    counted = joined.select(
        pl.col(OLD).is_null().sum().alias("added"), pl.col(NEW).is_null().sum().alias("removed"),
        both.sum().alias("matched"), (pl.any_horizontal(*flags.values()) if flags else pl.lit(False)).sum()
        .alias("changed"), *[flag.sum().alias(f"{c}{NEW}") for c, flag in flags.items()],
        first(pl.col(OLD).is_null()).alias(f"added{OLD}"), first(pl.col(NEW).is_null()).alias(f"removed{OLD}"),
        *[first(flag, pl.col(c).cast(pl.String) if new_schema[c] == pl.String else pl.col(c),
                pl.col(c + OLD).cast(pl.String) if new_schema[c] == pl.String else pl.col(c + OLD)).alias(c + OLD)
          for c, flag in flags.items()],
    ).collect(engine="streaming").row(0, named=True)
    per_column = {c: counted[f"{c}{NEW}"] for c in compared if counted[f"{c}{NEW}"]}
    return {
        "key": key,
        "rows_old": counted["matched"] + counted["removed"], "rows_new": counted["matched"] + counted["added"],
        "added": counted["added"], "removed": counted["removed"], "changed": counted["changed"],
        "changed_by_column": per_column,
        "examples": {
            "added": [_key_text(row, key) for row in counted[f"added{OLD}"]],
            "removed": [_key_text(row, key) for row in counted[f"removed{OLD}"]],
            "changed": {c: [{"key": _key_text(row, key), **around_difference(row[c + OLD], row[c])}
                            for row in counted[c + OLD]] for c in per_column},
        },
        "columns": {"added": [c for c in new_schema if c not in old_schema and c not in hidden],
                    "removed": [c for c in old_schema if c not in new_schema and c not in hidden],
                    "retyped": [{"column": c, "old": str(old_schema[c]), "new": str(new_schema[c])} for c in retyped],
                    "not_compared": sorted(hidden & (set(old_schema) | set(new_schema)))},
    }


def _key_text(row: dict, key: list[str]) -> str:
    return ", ".join(f"{k}={row[k]}" for k in key)


def around_difference(old: object, new: object) -> dict:
    """Excerpts of two values from a little before where they first differ (text), else as they are."""
    if isinstance(old, str) and isinstance(new, str):
        start = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        start = max(0, start - 20)
        prefix = "..." if start else ""
        return {"old": prefix + excerpt(old[start:], EXCERPT), "new": prefix + excerpt(new[start:], EXCERPT)}
    return {"old": excerpt(old, EXCERPT), "new": excerpt(new, EXCERPT)}


# -------------------------------------------------------------------------------------------------- score inputs


def score_diff(benchmark, old_tables: dict, new_tables: dict, withheld: set[str],
               releases: tuple[Release, Release]) -> dict:
    """Each score input of the benchmark (``Benchmark.score_inputs``) compared group by group; one that needs a
    config withheld from a Hub upload, or missing on one side, is reported as not compared."""
    try:
        with readable("the score inputs", None, *releases):
            old_inputs, new_inputs = benchmark.score_inputs(old_tables), benchmark.score_inputs(new_tables)
    except (KeyError, pl.exceptions.ColumnNotFoundError) as exc:
        return {"not_compared": f"needs {exc} on both sides" + (f" (withheld: {', '.join(sorted(withheld))})"
                                                                if withheld else "")}
    return {name: compare_counts(old_inputs[name], new_inputs[name]) for name in new_inputs if name in old_inputs}


def compare_counts(old, new) -> dict:
    """One score input (``contract.ScoreInput``) of OLD and NEW: groups added and removed, groups whose row count
    changed, and per group the distance between the distributions (W1 with a scale, else total variation)."""
    by = list(new.by)
    totals = (old.counts.group_by(by).agg(pl.col("count").sum())
              .join(new.counts.group_by(by).agg(pl.col("count").sum()), on=by, how="full", coalesce=True,
                    nulls_equal=True, suffix="_new").rename({"count": "count_old"}).fill_null(0).sort(by))
    added = totals.filter(pl.col("count_old") == 0)
    removed = totals.filter(pl.col("count_new") == 0)
    both = totals.filter((pl.col("count_old") > 0) & (pl.col("count_new") > 0))
    result = {"description": new.description, "by": by, "groups_old": int((totals["count_old"] > 0).sum()),
              "groups_new": int((totals["count_new"] > 0).sum()), "groups_added": added.height,
              "groups_removed": removed.height,
              "examples": {"added": [_group(r, by) for r in added.head(EXAMPLES).iter_rows(named=True)],
                           "removed": [_group(r, by) for r in removed.head(EXAMPLES).iter_rows(named=True)]},
              "groups_count_changed": int((both["count_old"] != both["count_new"]).sum())}
    if new.value is None:
        moved = both.with_columns((pl.col("count_new") - pl.col("count_old")).abs().alias("delta")).filter(
            pl.col("delta") > 0).sort("delta", *by, descending=[True, *[False] * len(by)])
        result["top"] = [{"group": _group(r, by), "old": r["count_old"], "new": r["count_new"]}
                         for r in moved.head(TOP_GROUPS).iter_rows(named=True)]
        return result
    distances = distribution_distances(old, new, both.select(by))
    changed = distances.filter(pl.col("distance") > TOLERANCE).sort("distance", *by,
                                                                    descending=[True, *[False] * len(by)])
    result |= {"distance": "W1 (rescaled to [0, 1])" if new.scale else "total variation",
               "groups_distribution_changed": changed.height,
               "max_distance": float(distances["distance"].max() or 0.0) if distances.height else 0.0,
               "top": [{"group": _group(r, by), "distance": r["distance"], "old": r["count_old"], "new": r["count_new"]}
                       for r in changed.head(TOP_GROUPS).iter_rows(named=True)]}
    return result


def distribution_distances(old, new, groups: pl.DataFrame) -> pl.DataFrame:
    """Per group of ``groups`` (in both): the distance of OLD's and NEW's distributions over ``value``, with both
    row counts. With a ``scale`` the Wasserstein-1 distance of the answers rescaled by it, sum over the sorted
    values of |U - V| x (next value - value) / scale (U, V the CDFs); else half the L1 distance of the shares."""
    by, value = list(new.by), new.value
    counts = (old.counts.select(*by, value, pl.col("count").alias("old"))
              .join(new.counts.select(*by, value, pl.col("count").alias("new")), on=[*by, value], how="full",
                    coalesce=True, nulls_equal=True)
              .join(groups, on=by, how="semi", nulls_equal=True).fill_null(0).sort([*by, value]))
    shares = counts.with_columns((pl.col("old") / pl.col("old").sum().over(by)).alias("p"),
                                 (pl.col("new") / pl.col("new").sum().over(by)).alias("q"))
    if new.scale:
        scales = new.counts.group_by(by).agg(pl.col(new.scale).first())
        gap = (pl.col(value).shift(-1).over(by) - pl.col(value)).fill_null(0).cast(pl.Float64)
        term = (pl.col("p").cum_sum().over(by) - pl.col("q").cum_sum().over(by)).abs() * gap
        distance = (pl.col("term").sum() / pl.col(new.scale).first()).alias("distance")
        shares = shares.with_columns(term.alias("term")).join(scales, on=by, how="left", nulls_equal=True)
    else:
        distance = ((pl.col("p") - pl.col("q")).abs().sum() / 2).alias("distance")
    return shares.group_by(by, maintain_order=True).agg(distance, pl.col("old").sum().alias("count_old"),
                                                        pl.col("new").sum().alias("count_new"))


def _group(row: dict, by: list[str]) -> str:
    return ", ".join(str(row[b]) for b in by)


# --------------------------------------------------------------------------------- card, licence, provenance, checks


def card_sections(folder: Path) -> tuple[dict, dict[str, str]]:
    """A card's YAML header and its sections (heading -> text), less the "Changes since" section."""
    path = folder / "README.md"
    text = read_text(path)
    header: dict = {}
    if text.startswith("---\n") and "\n---\n" in text[4:]:
        end = text.index("\n---\n", 4)
        try:
            header, text = yaml.safe_load(text[4:end]) or {}, text[end + 5:]
        except yaml.YAMLError as exc:
            raise InputError(f"the card's YAML header does not parse ({str(exc).splitlines()[0]})", file=path) from None
        if not isinstance(header, dict):
            raise InputError("the card's YAML header is not a mapping", file=path)
    sections: dict[str, list[str]] = {}
    heading, fenced = "(top)", False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("#") and not fenced:
            heading = line.lstrip("#").strip()
        sections.setdefault(heading, []).append(line)
    return header, {h: "\n".join(lines) for h, lines in sections.items() if not h.startswith(CHANGES_HEADING)}


def card_diff(old: Release, new: Release) -> dict:
    if not (old.card and new.card):
        return {"not_compared": "the new card is written after this comparison"}
    if old.hub != new.hub:
        return {"not_compared": "a Hub upload's card is rewritten for the Hub; compared are its files"}
    (old_header, old_sections), (new_header, new_sections) = card_sections(old.folder), card_sections(new.folder)
    return {"sections_added": [h for h in new_sections if h not in old_sections],
            "sections_removed": [h for h in old_sections if h not in new_sections],
            "sections_changed": [h for h in new_sections if h in old_sections and old_sections[h] != new_sections[h]],
            "metadata_changed": sorted(k for k in old_header.keys() | new_header.keys()
                                       if old_header.get(k) != new_header.get(k))}


def licence_diff(old: Release, new: Release) -> dict:
    """The card's licence and each config's redistributability, where they differ."""
    licences = [card_sections(r.folder)[0].get("license") if r.card else None for r in (old, new)]
    old_r, new_r = old.manifest.redistributable, new.manifest.redistributable
    return {**({"license": {"old": licences[0], "new": licences[1]}} if None not in licences and
               licences[0] != licences[1] else {}),
            "redistributable": {c: {"old": old_r.get(c), "new": new_r.get(c)}
                                for c in sorted(old_r.keys() | new_r.keys()) if old_r.get(c) != new_r.get(c)}}


PROVENANCE_KEYS = ("seed", "culturebench_version", "python", "libraries", "provenance", "bundled_sample",
                   "source_commit")
"""Manifest entries compared besides the inputs (``created_at`` is not a change)."""


def provenance_diff(old: dict, new: dict) -> dict:
    """Inputs added, removed or with another sha256, and the manifest entries of PROVENANCE_KEYS that differ."""
    old_inputs = {i["name"]: i for i in old.get("inputs", [])}
    new_inputs = {i["name"]: i for i in new.get("inputs", [])}
    return {"inputs_added": sorted(new_inputs.keys() - old_inputs.keys()),
            "inputs_removed": sorted(old_inputs.keys() - new_inputs.keys()),
            "inputs_changed": [{"name": n, "old_sha256": old_inputs[n]["sha256"], "new_sha256": new_inputs[n]["sha256"],
                                "old_rows": old_inputs[n].get("rows"), "new_rows": new_inputs[n].get("rows")}
                               for n in sorted(old_inputs.keys() & new_inputs.keys())
                               if old_inputs[n]["sha256"] != new_inputs[n]["sha256"]],
            "changed": {k: {"old": excerpt(old.get(k), 200), "new": excerpt(new.get(k), 200)}
                        for k in PROVENANCE_KEYS if old.get(k) != new.get(k)}}


def validation_diff(old: Path, new: Path) -> dict:
    """Checks of the validation reports (``validation/report.json``) that newly fail or pass, added or removed."""
    import json

    def checks(folder: Path) -> dict[str, bool] | None:
        path = folder / "validation" / "report.json"
        if not path.is_file():
            return None
        try:
            return {f"{c['config']}: {c['name']}": bool(c["passed"]) for c in json.loads(read_text(path))["checks"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a validation report (checks with config, name, passed): {exc}", file=path) from None

    before, after = checks(old), checks(new)
    if before is None or after is None:
        return {"not_compared": "a validation/report.json is missing"}
    common = before.keys() & after.keys()
    return {"newly_failing": sorted(c for c in common if before[c] and not after[c]),
            "newly_passing": sorted(c for c in common if after[c] and not before[c]),
            "added": sorted(after.keys() - before.keys()), "removed": sorted(before.keys() - after.keys())}


def is_changed(result: dict) -> bool:
    """Whether anything differs (what is only not compared is no change)."""
    tables = any(t.get("split_added") or t.get("split_removed") or t["added"] or t["removed"] or t["changed"]
                 or any(t["columns"][k] for k in ("added", "removed", "retyped")) for t in result["tables"])
    scores = any(s["groups_added"] or s["groups_removed"] or s["groups_count_changed"]
                 or s.get("groups_distribution_changed") for name, s in result["score_inputs"].items()
                 if name != "not_compared")
    card, licence, p, v = (result[k] for k in ("card", "licence", "provenance", "validation"))
    return bool(tables or scores or result["configs"]["added"] or result["configs"]["removed"]
                or any(card.get(k) for k in ("sections_added", "sections_removed", "sections_changed",
                                             "metadata_changed"))
                or licence.get("license") or licence["redistributable"]
                or any(p[k] for k in ("inputs_added", "inputs_removed", "inputs_changed", "changed"))
                or any(v.get(k) for k in ("newly_failing", "newly_passing", "added", "removed")))


# ------------------------------------------------------------------------------------------------------ reports

CHANGES_HEADING = "Changes since"


def summary_lines(result: dict) -> list[str]:
    """The short summary: one line per thing that changed (``diff`` prints it, the card and manifest keep it)."""
    lines = []
    configs = result["configs"]
    lines += [f"config {c} added" for c in configs["added"]] + [f"config {c} removed" for c in configs["removed"]]
    for t in result["tables"]:
        where = f"{t['config']}/{t['split']}"
        if t.get("split_added") or t.get("split_removed"):
            lines.append(f"{where}: split {'added' if t.get('split_added') else 'removed'}")
            continue
        columns = t["columns"]
        parts = [f"{len(columns[k])} column(s) {k}" for k in ("added", "removed", "retyped") if columns[k]]
        if t["added"] or t["removed"] or t["changed"] or parts:
            by_column = ", ".join(f"{c} {n:,}" for c, n in t["changed_by_column"].items())
            lines.append(f"{where}: {t['added']:,} added, {t['removed']:,} removed, {t['changed']:,} changed"
                         + (f" ({by_column})" if by_column else "") + "".join(f"; {p}" for p in parts))
        else:
            lines.append(f"{where}: unchanged ({t['rows_new']:,} rows)")
    for name, s in result["score_inputs"].items():
        if name == "not_compared":
            lines.append(f"score inputs not compared: {s}")
            continue
        moved = s.get("groups_distribution_changed", s["groups_count_changed"])
        if s["groups_added"] or s["groups_removed"] or moved or s["groups_count_changed"]:
            detail = (f"; max {s['distance']} {s['max_distance']:.4f}" if "max_distance" in s else "")
            lines.append(f"{name}: {s['groups_added']} group(s) added, {s['groups_removed']} removed, "
                         f"{moved} changed{detail}")
        else:
            lines.append(f"{name}: unchanged ({s['groups_new']} groups)")
    card = result["card"]
    if card.get("sections_changed") or card.get("sections_added") or card.get("sections_removed"):
        lines.append("card sections changed: " + ", ".join(card["sections_added"] + card["sections_removed"]
                                                           + card["sections_changed"]))
    licence = result["licence"]
    if licence.get("license"):
        lines.append(f"licence {licence['license']['old']} -> {licence['license']['new']}")
    lines += [f"config {c}: redistributable {v['old']} -> {v['new']}" for c, v in licence["redistributable"].items()]
    p = result["provenance"]
    inputs = [f"{len(p[k])} {k.split('_')[1]}" for k in ("inputs_added", "inputs_removed", "inputs_changed") if p[k]]
    if inputs:
        lines.append("raw inputs: " + ", ".join(inputs))
    if p["changed"]:
        lines.append("manifest: " + ", ".join(p["changed"]) + " differ")
    v = result["validation"]
    for kind in ("newly_failing", "newly_passing"):
        if v.get(kind):
            lines.append(f"checks {kind.replace('_', ' ')}: " + "; ".join(v[kind][:5])
                         + (f" (+{len(v[kind]) - 5})" if len(v[kind]) > 5 else ""))
    if not result["changed"]:
        lines.insert(0, "no change")
    return lines


def manifest_summary(result: dict) -> dict:
    """What ``build --previous`` records in the new manifest (and its card renders)."""
    return {"previous": result["old"], "changed": result["changed"], "lines": summary_lines(result)}


def previous_release(previous: str | Path, benchmark: str) -> Release:
    """``build --previous``: the earlier release, checked before the build starts (same benchmark, not damaged)."""
    old = open_release(previous)
    if old.manifest.benchmark != benchmark:
        raise InputError(f"--previous {previous} is a release of {old.manifest.benchmark!r}, not {benchmark!r}")
    return old


def changes_since(old: Release, folder: Path, manifest: dict) -> dict:
    """The summary of what a build being written into ``folder`` (its ``manifest`` with ``outputs``, its validation
    report written, its card not yet) changes from ``old``: what ``build --previous`` records."""
    return manifest_summary(diff(old, Release(folder, Manifest(manifest), "this build", card=False)))


def markdown(result: dict) -> str:
    """diff.md: the summary, then per config and split the counts, columns changed and examples, then the score
    inputs' largest changes and the rest."""
    old, new = result["old"], result["new"]
    out = [f"# {result['benchmark']}: {old['release']} -> {new['release']}", "",
           f"OLD built {old['created_at']} (manifest sha256 `{old['manifest_sha256']}`, {old['rows']:,} rows); "
           f"NEW built {new['created_at']} (manifest sha256 `{new['manifest_sha256']}`, {new['rows']:,} rows).", "",
           "## Summary", "", *[f"- {line}" for line in summary_lines(result)], "", "## Tables", ""]
    if result["configs"]["not_compared"]:
        out += [f"Not compared (withheld from a Hub upload): {', '.join(result['configs']['not_compared'])}.", ""]
    for t in result["tables"]:
        out.append(f"### {t['config']} / {t['split']}")
        out.append("")
        if "key" not in t:
            out += [f"Split {'added' if t.get('split_added') else 'removed'}.", ""]
            continue
        out.append(f"Matched on {', '.join(f'`{k}`' for k in t['key'])}: {t['rows_old']:,} -> {t['rows_new']:,} "
                   f"rows; {t['added']:,} added, {t['removed']:,} removed, {t['changed']:,} changed.")
        out.append("")
        for kind in ("added", "removed"):
            if t["examples"][kind]:
                out.append(f"- {kind}, e.g. " + "; ".join(f"`{k}`" for k in t["examples"][kind]))
        for column, n in t["changed_by_column"].items():
            out.append(f"- `{column}` changed in {n:,} rows, e.g.")
            out += [f"  - `{e['key']}`: `{e['old']}` -> `{e['new']}`" for e in t["examples"]["changed"][column]]
        columns = t["columns"]
        out += [f"- columns {kind}: {', '.join(columns[kind])}" for kind in ("added", "removed") if columns[kind]]
        out += [f"- column `{r['column']}` retyped {r['old']} -> {r['new']}" for r in columns["retyped"]]
        out.append("")
    out += ["## What scores depend on", ""]
    for name, s in result["score_inputs"].items():
        if name == "not_compared":
            out += [f"Not compared: {s}.", ""]
            continue
        out += [f"### {name}", "", f"{s['description']} (by {', '.join(s['by'])}): {s['groups_old']} -> "
                f"{s['groups_new']} groups; {s['groups_added']} added, {s['groups_removed']} removed, "
                f"{s['groups_count_changed']} with another row count"
                + (f", {s['groups_distribution_changed']} with another distribution ({s['distance']}, max "
                   f"{s['max_distance']:.4f})" if "distance" in s else "") + ".", ""]
        for kind in ("added", "removed"):
            if s["examples"][kind]:
                out.append(f"- groups {kind}, e.g. " + "; ".join(s["examples"][kind]))
        if s["top"]:
            out += ["", "| group | rows OLD | rows NEW |" + (" distance |" if "distance" in s else ""),
                    "|---|---|---|" + ("---|" if "distance" in s else "")]
            out += [f"| {g['group']} | {g['old']:,} | {g['new']:,} |" + (f" {g['distance']:.4f} |" if "distance" in g
                                                                         else "") for g in s["top"]]
        out.append("")
    out += ["## Card, licence, provenance, validation", "", "```yaml",
            yaml.safe_dump({k: result[k] for k in ("card", "licence", "provenance", "validation")}, sort_keys=True,
                           allow_unicode=True, width=110).rstrip(), "```", ""]
    return "\n".join(out)


def write(result: dict, out: Path) -> list[Path]:
    """DIR/diff.json and DIR/diff.md."""
    with atomic_directory(out) as folder:
        write_json(folder / "diff.json", result)
        (folder / "diff.md").write_text(markdown(result), encoding="utf-8")
    return [out / "diff.json", out / "diff.md"]
