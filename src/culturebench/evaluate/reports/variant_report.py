"""What a run asked under prompt variants reports of them (issue #63, docs/robustness.md): metrics.json's
``variants`` block (per item consistency, per variant the headline, their spread, an interval over items x variants,
the country view's order stability), the summary line and the position-bias figure. The variants themselves are
``variants``'s."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from culturebench.contract import NoCountryView
from culturebench.evaluate.runs.variants import TIE_RULE


@dataclass(frozen=True)
class VariantAnswer:
    """One answer as the variants report reads it (a benchmark makes these from its scored records)."""

    variant: str
    unit: str
    """The item as asked under every variant (e.g. question, prompt and sample): consistency compares its answers."""
    answer: str | None
    """The option picked, by its content (None: not read)."""
    position: int | None
    """The listed position (1-based) of the option picked, as the variant listed it (None: not read)."""
    asked: tuple
    """What identifies the request as sent: equal for two variants that asked the same prompt."""


@dataclass(frozen=True)
class VariantScore:
    """What a benchmark's own scoring of one variant's records alone gives the report."""

    headline: Mapping[str, float]
    """The benchmark's headline numbers (``Benchmark.headline``)."""
    countries: Mapping | None = None
    """Its country view (a countries.json object, ``Benchmark.countries``), None where it has none."""
    item_values: Mapping[str, Mapping[str, float]] | None = None
    """Per headline name whose value is a plain mean over items, each item's value (the interval resamples them);
    a name left out gets no interval."""


def variant_score(benchmark: Any, metrics: Mapping, options: Any, release: Any = None,
                  item_values: Mapping[str, Mapping[str, float]] | None = None) -> VariantScore:
    """A ``VariantScore`` from one variant's metrics: ``benchmark``'s headline and country view of them."""
    try:
        countries = benchmark.countries(metrics, release)
    except NoCountryView:
        countries = None
    return VariantScore(benchmark.headline(metrics, options), countries, item_values)


INTERVAL_NOTE = ("a bootstrap over items and variants together (scipy.stats.bootstrap via uncertainty.resample_units: "
                 "the items and the variants each resampled with replacement, the statistic the mean over the drawn "
                 "variants of each one's mean over the drawn items); only headlines that are a plain mean over "
                 "items have one")


def report(answers: Sequence[VariantAnswer], variants: Sequence[str], scored: Callable[[str], VariantScore],
           seed: int = 0) -> dict:
    """metrics.json's ``variants`` block: per item (``unit``) its consistency (the share of its variants whose
    answer is the item's modal answer, ``TIE_RULE``) and their mean; per variant the benchmark's headline
    (``scored(variant)``: its own scoring of that variant's records alone); per headline name the spread across
    variants (max - min and the population standard deviation) and an interval over items x variants
    (``INTERVAL_NOTE``); the country view's order stability across variants; per variant the share of read
    answers given to each listed position; and how many requests repeated an earlier variant's (asked once)."""
    by_unit: dict[str, dict[str, str | None]] = {}
    for a in answers:
        by_unit.setdefault(a.unit, {})[a.variant] = a.answer
    per_item = {unit: _consistency(given) for unit, given in sorted(by_unit.items())}
    scores = {v: scored(v) for v in variants}
    headlines = {v: dict(scores[v].headline) for v in variants}
    names = sorted({name for values in headlines.values() for name in values})
    spread = {}
    for name in names:
        values = [headlines[v][name] for v in variants if name in headlines[v]]
        spread[name] = {"max_minus_min": max(values) - min(values), "std": statistics.pstdev(values),
                        "n_variants": len(values)}
    positions: dict[str, Counter] = {v: Counter() for v in variants}
    for a in answers:
        if a.position is not None:
            positions[a.variant][a.position] += 1
    asked_before: set[tuple] = set()
    identical = 0
    for v in variants:
        mine = {a.asked for a in answers if a.variant == v}
        identical += len(mine & asked_before)
        asked_before |= mine
    block = {"variants": list(variants), "tie_rule": TIE_RULE, "n_items": len(per_item),
             "consistency": statistics.fmean(per_item.values()) if per_item else None,
             "per_item": per_item, "headlines": headlines, "spread": spread,
             "interval": items_by_variants_interval(scores, variants, seed),
             "position_share": {v: {str(p): n / sum(c.values()) for p, n in sorted(c.items())}
                                for v, c in positions.items()},
             "identical_requests": identical,
             "identical_note": "requests of a variant identical to an earlier variant's (asked once: the response "
                               "cache keys on the request)"}
    countries = country_stability({v: scores[v].countries for v in variants}, variants)
    if countries is not None:
        block["countries"] = countries
    return block


def items_by_variants_interval(scores: Mapping[str, VariantScore], variants: Sequence[str], seed: int = 0) -> dict:
    """Per headline name with item values under every variant: its estimate (the mean over variants of the
    per-variant means) and a 95% interval resampling its items and the variants together (``INTERVAL_NOTE``): the
    items one stratum, the variants a second, of ``uncertainty.resample_units``; none with fewer than two of
    either (``no_spread``)."""
    import numpy as np

    from culturebench.evaluate.reports.uncertainty import Bootstrap, finite_or_none, resample_units

    names = sorted(set.intersection(*(set(scores[v].item_values or {}) for v in variants))) if variants else []
    settings = Bootstrap(seed=seed)
    out: dict = {"note": INTERVAL_NOTE, "record": settings.record(unit="item x variant", strata="items; variants"),
                 "per_name": {}}
    for name in names:
        items = sorted({item for v in variants for item in scores[v].item_values[name]})
        index = {item: i for i, item in enumerate(items)}
        values, counted_cells = np.zeros((len(items), len(variants))), np.zeros((len(items), len(variants)))
        for j, v in enumerate(variants):
            for item, value in scores[v].item_values[name].items():
                values[index[item], j], counted_cells[index[item], j] = value, 1.0
        n_items = len(items)

        def statistic(positions: np.ndarray) -> np.ndarray:
            rows, columns = positions[positions < n_items], positions[positions >= n_items] - n_items
            with np.errstate(invalid="ignore", divide="ignore"):  # a drawn variant none of the drawn items has
                per_variant = values[rows].sum(axis=0)[columns] / counted_cells[rows].sum(axis=0)[columns]
            finite = per_variant[np.isfinite(per_variant)]
            return np.array([finite.mean() if finite.size else np.nan])

        result = resample_units([range(n_items), range(n_items, n_items + len(variants))], statistic, settings,
                                unit="item or variant", stratum="stratum (the items, the variants)")
        out["per_name"][name] = {"estimate": finite_or_none(result.estimate[0]), "interval": result.interval(0),
                                 "n_items": n_items, "n_variants": len(variants)}
        if result.no_spread():
            out["per_name"][name]["no_spread"] = result.no_spread()
    return out


def country_stability(views: Mapping[str, Mapping | None], variants: Sequence[str]) -> dict | None:
    """The country view under each variant: each country's measure per variant, and per variant other than the
    default the Spearman rank correlation (``scipy.stats.spearmanr``) of the countries' values with the default's
    (1: the same order; the countries both views hold). None where the benchmark has no country view."""
    from scipy.stats import spearmanr

    if not variants or views.get(variants[0]) is None or any(views.get(v) is None for v in variants):
        return None
    measure = views[variants[0]]["measure"]
    values = {v: {code: entry.get(measure) for code, entry in views[v]["countries"].items()} for v in variants}
    per_country = {code: {v: values[v].get(code) for v in variants} for code in sorted(values[variants[0]])}
    stability = {}
    for v in variants[1:]:
        both = [code for code, by in per_country.items()
                if by.get(variants[0]) is not None and by.get(v) is not None]
        a, b = [per_country[c][variants[0]] for c in both], [per_country[c][v] for c in both]
        rho = None
        if len(both) >= 3 and len(set(a)) > 1 and len(set(b)) > 1:
            rho = float(spearmanr(a, b).statistic)
        stability[v] = {"spearman": rho, "n_countries": len(both),
                        **({} if rho is not None else {"reason": "fewer than three countries or a constant view"})}
    return {"measure": measure, "higher_is_better": views[variants[0]].get("higher_is_better", True),
            "order_stability": stability, "per_country": per_country}


def _consistency(given: Mapping[str, str | None]) -> float:
    """The share of an item's variants whose answer is its modal answer (``TIE_RULE``)."""
    return max(Counter(given.values()).values()) / len(given)


def summary_line(benchmark: str, block: Mapping | None) -> list[str]:
    """The summary's line of a run with variants (none without): mean consistency, the largest spread, the
    countries' order stability (where the benchmark has a country view) and the identical requests."""
    if not block:
        return []
    spread = max(block["spread"].items(), key=lambda kv: kv[1]["max_minus_min"], default=None)
    widest = f"; widest spread {spread[0]} {spread[1]['max_minus_min']:.3f}" if spread else ""
    consistency = "n/a" if block["consistency"] is None else f"{block['consistency']:.3f}"
    stability = (block.get("countries") or {}).get("order_stability") or {}
    ranks = "; countries' order against the default's (Spearman): " + ", ".join(
        f"{v} {'n/a' if s['spearman'] is None else format(s['spearman'], '.3f')}" for v, s in stability.items()
    ) if stability else ""
    return [f"{benchmark} variants {', '.join(block['variants'])}: consistency {consistency} over "
            f"{block['n_items']:,} items{widest}{ranks}; {block['identical_requests']:,} requests identical to an "
            "earlier variant's, asked once (metrics.json variants, position_bias.png)"]



POSITION_FIGURE = "position_bias.png"
POSITION_FILE = "position_bias.json"


def write_position_bias(block: Mapping | None, out: Any) -> list:
    """A run with variants: ``position_bias.json`` (per variant the share of read answers given to each listed
    position, 1 the first listed: the ``variants`` block's ``position_share``) and beside it ``position_bias.png``
    (a bar per position and variant); nothing without variants. A model that answers by content moves its answers
    as the variants move the options; one that answers by position keeps them at one position."""
    from pathlib import Path

    from culturebench.evaluate.reports import plots
    from culturebench.evaluate.reports.countries import write_json_file

    if not block:
        return []
    out = Path(out)
    shares = block["position_share"]
    data = {"variants": list(block["variants"]), "position_share": shares,
            "note": "share of each variant's read answers given to the option at each listed position (1: listed "
                    "first); the options' content moves with the variant, the positions do not"}
    written = [write_json_file(out / POSITION_FILE, data)]
    positions = sorted({int(p) for by in shares.values() for p in by}) or [1]
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(positions) * len(shares) + 2.5), 4.0), dpi=100)
    width = 0.8 / max(1, len(shares))
    for i, (variant, by) in enumerate(shares.items()):
        plots.interval_bars(ax, plots.grouped_bar_x(range(len(positions)), len(shares), i, width),
                            [by.get(str(p), 0.0) for p in positions], [None] * len(positions), width,
                            label=variant, color=f"C{i}", fontsize=7)
    ax.set_xticks(range(len(positions)))
    ax.set_xticklabels([str(p) for p in positions])
    ax.set_xlabel("listed position of the option answered (1: first)")
    plots.value_axis(ax, 1, "share of read answers")
    plots.panel_title(ax, "Position bias: where the answers fall, per prompt variant", fontsize=10)
    plots.legend_beside(ax, fontsize=8)
    plots.save_figure(fig, out / POSITION_FIGURE)
    return [*written, out / POSITION_FIGURE]
