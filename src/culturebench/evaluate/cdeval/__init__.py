"""CDEval evaluation and scoring (Wang et al. 2024, arXiv 2311.16421, Sec. 3.2.2, Sec. 4, App. A.3):
``culturebench evaluate cdeval`` and ``culturebench score cdeval``.

``evaluate`` asks a model the six prompts of Table 8 (``prompts``) for every question of a CDEval release,
``R`` samples each at temperature 1, streamed from a generator through ``runs.stream_records``
(``runner.stream_requests`` with a response cache in the run folder, each batch's records appended to
responses.jsonl as it is answered), and writes responses.jsonl, metrics.json, the plots and run.json. ``score``
recomputes everything from one or more responses.jsonl files (several models, or language variants of one: the
between-model similarities and the PCA).

The computation is a chain of pure functions from tables to tables (polars), one per equation of the paper:

- Eq. 1 (``prompt_likelihood``): P(g|s_t) = (1/R) sum_k 1[a_tk = g], a neutral answer counting 0.5 (App. A.3.1).
- Eq. 6 (``instability``): U_t = sum_x sum_k 1[a_tk^norm != a_tk^reverse], a count over questions x and sample
  indices k of the norm / reverse answers to template t that disagree (the answer as the orientation it picks:
  target, other, or neutral). Eq. 6 prints a sum over t inside U_t as well; U_t is per template, so we read it
  as over x and k only.
- Eq. 7 (``template_weights``): w_t^norm = w_t^reverse = 1/2 exp(U_t/N) / sum_t' exp(U_t'/N), N = -1000; the
  per-template weight w_t^norm + w_t^reverse is Table 4's.
- Eq. 2 (``orientation_likelihood``): P(g|S) = sum over the six prompts of w_t P(g|s_t).
- Table 2 / Table 9 (``domain_likelihood``): the mean P(g|S) per dimension and domain.
- Eq. 3 (``country_similarity``): Sim = 1 / (1 + sqrt(sum_d (beta C_h,d - C_m,d)^2)) over the six dimensions,
  beta = 0.01, C_m,d the mean P(g|S) over the dimension's questions (``dimension_likelihood``). A country or a
  model without all six dimensions is left out and listed with what it lacks.
- Eq. 4 (``model_similarity``): 1 / (1 + sqrt(sum_d (C_a,d - C_b,d)^2)); Eq. 5 (``pairwise_baseline``): the mean
  of Eq. 4 over the n(n-1) ordered pairs of models.
- Sec. 4.4 (``group_similarity``): Eq. 3 against the mean six-dimension vector of each country group (the Hofstede
  table's optional ``group`` column). Fig. 6 (right, ``pca_points``): PCA of models and countries on Eq. 3's scale.
- Sec. 4.2 (language variants): a responses record may carry ``language``; each (model, language) is scored as
  its own respondent, labelled ``model [language]`` (Fig. 4: likelihoods and Eq. 3 similarities per language).
  ``evaluate`` on a release built from a translated questionnaire (its manifest's ``language``, see
  ``culturebench generate cdeval_translate``) writes that language into every record.
- Intervals (issue #18, ``bootstrap_scores``): a bootstrap over questions within each dimension recomputes the
  chain above (Eq. 7 weights included) on each resample; paired model differences with Holm-adjusted p-values.
  ``COMPARE`` is this benchmark's entry for ``culturebench compare``.

The package, one module per role: ``prompts`` (Table 8's prompts and the answer extraction), ``items`` (the
release's tables and the planned requests), ``parsing`` (responses.jsonl read and each answer scored),
``equations`` (Eq. 1-7 and Sec. 4.4 as table functions), ``bootstrap`` (the intervals), ``metrics``
(metrics.json), ``plots``, ``run`` (``evaluate``, ``score`` and the command line's ``cli_*``) and ``compare``
(``COMPARE``).
"""

from culturebench.evaluate.cdeval.items import (
    BETA, DIMENSIONS, DOMAINS, INSTABILITY_SCALE, normalise_hofstede, plan_requests, release_tables)
from culturebench.evaluate.cdeval.parsing import score_answers
from culturebench.evaluate.cdeval.equations import (
    country_similarity, country_vectors, group_similarity, instability, model_similarity, model_vectors,
    orientation_likelihood, pairwise_baseline, prompt_likelihood, template_weights)
from culturebench.evaluate.cdeval.metrics import score, score_responses
from culturebench.evaluate.cdeval.run import cli_check, cli_evaluate, cli_score, evaluate, summary
from culturebench.evaluate.cdeval.compare import COMPARE

__all__ = [
    "BETA", "COMPARE", "DIMENSIONS", "DOMAINS", "INSTABILITY_SCALE", "cli_check", "cli_evaluate", "cli_score",
    "country_similarity", "country_vectors", "evaluate", "group_similarity", "instability", "model_similarity",
    "model_vectors", "normalise_hofstede", "orientation_likelihood", "pairwise_baseline", "plan_requests",
    "prompt_likelihood", "release_tables", "score", "score_answers", "score_responses", "summary", "template_weights"]
