"""LLM-GLOBE evaluation and scoring (Karinshak et al. 2024, arXiv 2411.06032, Sec. 4, App. B):
``culturebench evaluate llm_globe`` and ``culturebench score llm_globe``.

**Closed prompts** (Tables 2-3): each prompt asked ``CLOSED_SAMPLES`` = 3 times at temperature 1.0; the whole number
1-7 is read (``prompts.parse_rating``: an invalid answer is recorded with its parse_status, never
guessed); the release's ``reverse`` items are turned around (8 - x: on Sec. 3.1.1's scale 1 = strongly agree, so an
item whose agreement means high on its dimension is reverse) so that 7 is high on the dimension; per model and
dimension the mean and SD; one-sample t-tests (``scipy.stats.ttest_1samp``) of a group's values against the GLOBE
2004 score of a chosen society (societal "values" and "practices", from the release's ``globe_2004`` config), in
the unit the printed numbers imply (``T_UNITS``: one value per prompt, the mean of the group's models and samples;
``t_unit: pooled`` makes every answer a value).

**Open prompts** (Tables 4-5, Fig. 2-3): one answer per prompt and language at temperature 1.0, capped at 100
tokens. LLMs-as-a-Jury: every juror (any backend) rates every answer with the juror prompt (rubric in the juror's
language, question and answer in the original language) on 1-7. The jury score is the least-squares combination

    S(x) = sum_j w_j J_j(x) + w_L L(x) + b        (L = 1 for a zh-CN prompt, 0 for English)

fitted on a file of human ratings (response id, human score) with a seeded 2:1 train/test split; MAE, MSE, RMSE and
R^2 on the test part (the paper: MAE 0.638, R^2 0.882). Without human ratings the weights can be given in the
config (``jury_weights``); without either, S is the plain mean of the jurors (reported as such). Then per model
and dimension mean/SD; group means and t-tests on one value per prompt and model (Tables 4-5); per dimension a
Friedman test across models (blocks: the prompts, each model's score averaged over its samples and whatever
language it answered in, so US models answering in English and Chinese models in Chinese share blocks; needs >= 3
models) with post-hoc pairwise Wilcoxon signed-rank tests (Holm-adjusted too; p-value heatmap
``wilcoxon_PART.png``, Fig. 2, not drawn for a single model); two-sample t-tests between two model groups (e.g. US
vs CN; Student's by default; Sec. 4.2.4's printed t values do not follow from Tables 4-5, ``GROUP_TTEST_NOTE``); a
radar plot of group (or model) means over the nine dimensions (``radar_PART.png``,
Fig. 3).

**Intervals** (issue #18, ``prompt_bootstrap``): every mean of Tables 2-5 (per model and per group, each part) gets
a 95% interval from a seeded bootstrap over prompts, resampled within each dimension and shared by all models and
groups (``mean_ci`` and ``n_prompts`` beside ``mean``; BOOTSTRAP_NOTE); the point estimates are unchanged. The
group t-test rows get the difference of the group means with its interval, and ``model_differences`` lists every
pair of models per dimension with the paired difference, its interval and Fig. 2's tests. ``COMPARE`` is this
benchmark's entry for ``culturebench compare``.

**Options** come from a small JSON or YAML file given with ``--config`` (every key optional)::

    {"part": "closed" | "open" | "both",          # default "closed" ("--split closed|open|both" also works)
     "language": "en" | "zh" | "both",             # prompt languages (default "en")
     "samples": 3, "open_samples": 1, "open_max_tokens": 100,
     "jurors": [{"model": "m", "backend": "openai", "base_url": "http://...", "language": "en", "name": "m-en"}],
     "juror_temperature": 0.0, "juror_max_tokens": 8,
     "human_ratings": "ratings.csv",               # CSV/TSV/JSONL: response_id, human_score (relative to the config)
     "jury_weights": {"weights": {"m-en": 0.5}, "language": 0.1, "intercept": 0.2},   # instead of fitting
     "split_seed": 0, "test_fraction": 0.3333333333333333,
     "groups": {"US": ["gpt-4o"], "CN": ["qwen"]}, "compare": ["US", "CN"], "equal_var": true,
     "society": "United States" or "societies": {"US": "USA", "CN": "China"},
     "t_unit": "paper" | "pooled"}

Every option, the society names included, is checked against the release before the first model call.

``evaluate`` runs one model (and the jurors) through ``runner.run_requests`` with the run folder's response cache
and writes responses.jsonl (one record per closed answer, open answer and juror rating: raw text kept),
metrics.json, radar.png, wilcoxon.png and run.json. ``score`` recomputes every number from one or more
responses.jsonl files (comma-separated; several models give the across-model tests).

The package, one module per role: ``prompts`` (the closed and open prompts, the juror prompt and the answer
parsers), ``config`` (the JSON/YAML options: parts, languages, jurors, groups, societies), ``items`` (the release's
tables and the planned closed, open and juror requests), ``parsing`` (responses.jsonl and human ratings read),
``scoring`` (closed answers scored, the jury fitted and applied), ``groups`` (means, SDs, the GLOBE, model and group
tests), ``bootstrap`` (the intervals), ``metrics`` (metrics.json), ``plots``, ``run`` (``evaluate``, ``score`` and
the command line's ``cli_*``) and ``compare`` (``COMPARE``).
"""

from culturebench.evaluate.llm_globe.config import Config, load_config
from culturebench.evaluate.llm_globe.items import release_tables, response_id
from culturebench.evaluate.llm_globe.scoring import apply_jury, fit_jury
from culturebench.evaluate.llm_globe.groups import GROUP_TTEST_NOTE, globe_ttests, group_means
from culturebench.evaluate.llm_globe.metrics import score, score_records
from culturebench.evaluate.llm_globe.plots import write_run
from culturebench.evaluate.llm_globe.run import cli_check, cli_evaluate, cli_score, evaluate, summary
from culturebench.evaluate.llm_globe.compare import COMPARE

__all__ = [
    "COMPARE", "Config", "GROUP_TTEST_NOTE", "apply_jury", "cli_check", "cli_evaluate", "cli_score", "evaluate",
    "fit_jury", "globe_ttests", "group_means", "load_config", "release_tables", "response_id", "score", "score_records",
    "summary", "write_run"]
