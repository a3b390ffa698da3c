"""The engine's hooks shared by the closed-form benchmarks asked under prompt variants (``--variants``, issue
#63): one stream of planned requests (the contract's default ``answer``), a fresh run's records scored
per variant (the paper's prompts for the metrics, each other variant's headline beside them in metrics.json's
``variants`` block, ``variant_report.report``), saved responses (``culturebench score``) scored by the benchmark's own
reader. A subclass (each benchmark's run module) gives the parts
that are its own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import polars as pl

from culturebench.contract import Answers, Benchmark, Hooks, Result, RunPlan
from culturebench.evaluate.reports import variant_report
from culturebench.evaluate.runs import run_folder, variants


class ClosedFormHooks(Hooks):
    """``score`` of a closed-form benchmark with prompt variants."""

    benchmark: ClassVar[Benchmark]
    """The benchmark whose hooks these are (its ``headline`` scores each variant)."""

    def score(self, plan: RunPlan, answers: Answers) -> Result:
        """Saved responses (``Answers.saved``): ``score_saved``. A fresh run's: its records (``run_answers``) scored
        under the paper's prompts (``score_variant`` of ``variants.DEFAULT``), and with ``--variants`` each variant's
        headline by the same scoring of its records alone (metrics.json's ``variants``)."""
        if answers.saved:
            scored = self.score_saved(plan.options, answers.files)
            return Result(metrics=scored.metrics, written=[], score=scored)
        frame = self.run_answers(plan, answers.path).with_columns(pl.col("variant").fill_null(variants.DEFAULT))
        scored = self.score_variant(plan, frame.filter(pl.col("variant") == variants.DEFAULT), answers)
        if len(plan.options.variants) > 1:

            def variant_score(variant: str) -> variant_report.VariantScore:
                mine = scored if variant == variants.DEFAULT else self.score_variant(
                    plan, frame.filter(pl.col("variant") == variant), answers)
                return variant_report.variant_score(self.benchmark, mine.metrics, plan.options, plan.options.release,
                                              self.item_values(frame, variant))

            scored.metrics["variants"] = run_folder.json_safe(variant_report.report(
                self.variant_answers(frame, plan), plan.options.variants, variant_score, seed=plan.options.seed))
            if plan.wordings.notes:  # what the paraphrase variants could not ask (evaluate.runs.paraphrases)
                scored.metrics["variants"]["paraphrase_notes"] = list(plan.wordings.notes)
        return Result(metrics=scored.metrics, written=[], score=scored)

    def item_values(self, frame: pl.DataFrame, variant: str) -> dict[str, dict[str, float]] | None:
        """Per headline that is a plain mean over items, each item's value under ``variant`` (the variants report's
        interval over items x variants resamples them); None (the default): no headline is such a mean."""
        return None

    def run_answers(self, plan: RunPlan, path: Path) -> pl.DataFrame:
        """The fresh run's responses file as its scoring reads it (a ``variant`` column among them)."""
        raise NotImplementedError

    def score_variant(self, plan: RunPlan, frame: pl.DataFrame, answers: Answers) -> Any:
        """The scores (a ``ScoreResult``) of ``frame``, the run's records of one variant."""
        raise NotImplementedError

    def variant_answers(self, frame: pl.DataFrame, plan: RunPlan) -> list[variant_report.VariantAnswer]:
        """Each answer of ``frame`` (the run's records) as the variants report reads it."""
        raise NotImplementedError

    def score_saved(self, options: Any, files: Sequence[Path]) -> Any:
        """The scores (a ``ScoreResult``) of saved responses files."""
        raise NotImplementedError
