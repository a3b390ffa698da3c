"""NormAd evaluation and scoring (Rao et al., "NormAd: A Benchmark for Measuring the Cultural Adaptability of Large
Language Models", 2024, Sec. 3-5, App. A): ``culturebench evaluate normad`` and ``culturebench score normad``.

``evaluate`` asks a model, for every story of a NormAd release (config ``stories``), whether the story's action is
socially acceptable under each of five contexts (``prompts.CONTEXTS``: none, COUNTRY, VALUE, COUNTRY+VALUE,
RULE-OF-THUMB) with the prompt of App. A.3 Fig. 9, options Yes / No / Neither, at temperature 0 with ``max_tokens`` 10
(the authors' inference config; the paper prints no decoding settings),
streamed from a generator through ``runs.stream_records`` (``runner.stream_requests`` with a response cache in the run
folder, each batch's records appended to responses.jsonl as it is answered); it writes responses.jsonl, metrics.json,
the plots and run.json. ``score`` recomputes everything from one or more responses.jsonl files (re-parsing the raw
answers against the release's gold labels).

Metrics, per model and context (Sec. 4-5, App. A.4, Figs. 3, 5, 6, 10, 11, 13):

- accuracy over the three labels (Sec. 4, Fig. 3), and the accuracy over parsed answers only;
- per-label and macro precision / recall / F1 over yes / no / neutral (Table A.4; scikit-learn's definition with
  ``labels=LABELS``; 0/0 = 0);
- ``answer_rule``: answers are read as the authors' ``run_model_inference.py`` reads them (``prompts.ANSWER_RULES``:
  case-sensitive "Yes" / "option 1", else "No" / "option 2", else Neither), or ours with ``--answer-rule strict``;
  ``n_read_differently`` counts the answers the other rule scores as another label;
- ``unparsed_share``: the share of answers that are not one clear Yes / No / Neither (parse status ambiguous,
  refusal or unparsed). ``UNPARSED_RULES``: by default such an answer is read as Neither (``neutral``), the authors'
  fallback, which Table A.4's rows of models that always land on Neither fit; ``wrong`` (``--unparsed-wrong``)
  counts it as no label (a miss for its gold label, a false positive for none);
- accuracy by Inglehart-Welzel cultural zone (Figs. 5, 10, 13), by subaxis (Sec. 5.3), by gold label (Figs. 6, 11)
  and by country (the paper plots no per-country figure: ours, to read the zone figures country by country), the
  distribution of predicted labels and the gold x predicted confusion counts.

Baseline, per model and context, on the same answers' stories: ``always_neither`` (Table A.4: the P / R / F1 of a
model that answers Neither to every story; 0.103 / 0.333 / 0.158 on the paper's label counts).

Intervals (issue #18, ``bootstrap_scores``): a bootstrap over stories, one resample of stories shared by every
model and context, recomputes accuracy, the accuracy over parsed answers and per-label / macro P / R / F1 from each
story's answer counts (so the point estimates are exactly the ones above), and the paired accuracy difference of
every two models per context on the stories both answered (Holm over the family). The breakdowns by zone, gold
label, subaxis and country get a per-group interval, size in stories and a ``small`` flag
(``uncertainty.group_breakdown``). ``COMPARE`` is this benchmark's entry for ``culturebench compare``.

The package, one module per role: ``prompts`` (App. A.3's prompt and the answer parser), ``items`` (the release's
stories and the planned requests), ``parsing`` (responses.jsonl read and each answer scored under the unparsed
rule), ``measures`` (accuracy and per-label / macro P / R / F1, the always-Neither baseline), ``bootstrap`` (the
intervals), ``metrics`` (metrics.json), ``plots``, ``run`` (``evaluate``, ``score`` and the command line's ``cli_*``)
and ``compare`` (``COMPARE``).
"""

from culturebench.evaluate.normad.items import UNKNOWN, plan_requests, release_tables
from culturebench.evaluate.normad.parsing import scored_label
from culturebench.evaluate.normad.measures import accuracy, always_neither, label_scores
from culturebench.evaluate.normad.metrics import score_responses
from culturebench.evaluate.normad.run import cli_check, cli_evaluate, cli_score, evaluate, summary
from culturebench.evaluate.normad.compare import COMPARE

__all__ = [
    "COMPARE", "UNKNOWN", "accuracy", "always_neither", "cli_check", "cli_evaluate", "cli_score", "evaluate",
    "label_scores", "plan_requests", "release_tables", "score_responses", "scored_label", "summary"]
