"""LLM-GLOBE's country view (issue #56, ``LLMGlobe.countries``): how far the model's mean score per GLOBE
dimension lies from each GLOBE 2004 society's scores (the release's ``globe_2004`` config)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from culturebench.evaluate.reports.countries import from_named
from culturebench.evaluate.llm_globe.items import release_tables
from culturebench.evaluate.llm_globe.prompts import DIMENSIONS


def model_means(metrics: Mapping) -> tuple[str, dict[str, float]] | None:
    """(model, dimension -> mean) of the closed part's means per dimension (else the open part's), the first
    model of the run; None without them."""
    for part in ("closed", "open"):
        cells = (metrics.get(part) or {}).get("mean_sd") or {}
        for model, by_dimension in cells.items():
            means = {d: c.get("mean") for d, c in by_dimension.items() if isinstance(c, dict)}
            if any(v is not None for v in means.values()):
                return model, {d: float(v) for d, v in means.items() if v is not None}
    return None


def society_distances(metrics: Mapping, release: Path | None) -> dict | None:
    """countries.json of the Euclidean distance (GLOBE's 1-7 scale) between the model's dimension means and each
    society's ``values`` over the dimensions both have (``distance``), and its ``practices``
    (``distance_practices``); None without the model's means or the release's globe_2004 config."""
    found = model_means(metrics)
    if found is None or release is None or not Path(release).is_dir():
        return None
    globe = release_tables(Path(release)).get("globe_2004")
    if globe is None or globe.height == 0:
        return None
    model, means = found
    rows, practices = [], {}
    for (society,), part in globe.group_by("country", maintain_order=True):
        scores = {kind: {d: v for d, v in zip(part["dimension"], part[kind]) if v is not None and d in means}
                  for kind in ("values", "practices")}
        distance = {kind: math.sqrt(sum((means[d] - v) ** 2 for d, v in s.items())) if s else None
                    for kind, s in scores.items()}
        rows.append((society, distance["values"], None, len(scores["values"])))
        practices[society] = distance["practices"]
    data = from_named(rows, benchmark="llm_globe", measure="distance", higher_is_better=False, model=model,
                      measures={"distance": "Euclidean distance between the model's mean per GLOBE dimension and "
                                            "the society's GLOBE 2004 societal values ('should be'), 1-7 scale, over "
                                            f"the dimensions both have (of {len(DIMENSIONS)}); lower is closer",
                                "distance_practices": "the same against the societal practices ('as is')"},
                      notes=["no interval: one distance between two mean vectors (metrics.json has each "
                             "dimension's interval)"])
    for entry in data["countries"].values():
        society = next((s for s in practices if s.replace("_", " ") == entry["name"] or s == entry["name"]), None)
        entry["distance_practices"] = practices.get(society)
    return data
