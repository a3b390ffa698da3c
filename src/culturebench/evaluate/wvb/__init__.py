"""Score model answers on WorldValuesBench (Zhao et al. 2024, Sec. 3.2-3.5): ``culturebench score wvb``.

Input: the paper's evaluate input, a TSV or CSV (delimiter sniffed) with columns QUESTION_ID, PARTICIPANT_ID, SCORE,
one model answer per row. Human answers are joined from the release's ``examples`` by (participant_id,
question_id), whatever split they are in; only the participants present in the input are read (lazily). Per question,
the W1 distance between the human answers and the valid model answers of the covered rows (Sec. 3.2, Table 2; see
``metrics``), its mean / std (Table 2's Mean row) and threshold curve (Fig. 3); the same per demographic group, and
two oracle baselines (Sec. 3.3): uniform and majority.

The majority baseline has two readings (``MAJORITY_DEFINITIONS``, facts/wvb.json ``evaluation.baselines``):
``pooled`` (default) predicts the most frequent of the question's scored human answers, which reproduces Table 2's
Majority column; ``per_group`` predicts each participant the most frequent answer of their probe group (continent x
urban/rural x education level), as Sec. 3.3's text says, and is 0.18 off Table 2 on average. Choose with
``--config`` (``{"majority": "per_group"}``); metrics.json names the one used (``baselines.majority.definition``).

``culturebench evaluate wvb`` (``run``): builds the App. B prompts (``prompts``) for the probe or a split one at a
time (``requests.iter_requests``), runs them through ``runner.stream_requests`` in bounded batches with a response
cache in the run folder, appends each batch's parsed records to the responses file (responses.jsonl, or parquet shards
for a large run) and scores them from it with the same code (``score_answers``), writing run.json (``runs``).

The package, one module per part of the protocol (this module re-exports their public names): ``items`` (the
release, read lazily, and the evaluated rows), ``requests`` (prompts -> requests, responses records), ``parsing``
(answers read back and paired with the rows), ``scoring`` (the paper's metrics), ``intervals`` (the bootstrap),
``plots``, ``run`` (``evaluate`` and the command line's entry points) and ``comparison`` (``COMPARE``).

Intervals (issue #18, ``W1Bootstrap``, ``add_intervals``): a seeded bootstrap over participants within each question
recomputes every W1 statistic; metrics.json gets ``<key>_ci`` beside each value and ``group_breakdown``. ``COMPARE``
is this benchmark's entry for ``culturebench compare`` (runs re-scored and bootstrapped together: paired).
"""

from culturebench.evaluate.wvb.items import (  # noqa: F401
    check_inputs,
    evaluation_rows,
    limited_rows,
    PROBE_DIMENSIONS,
    prompt_tables,
    question_order,
    release_routes,
    release_rows,
    SPLITS,
)

from culturebench.evaluate.wvb.requests import (  # noqa: F401
    iter_requests,
    parse_records,
    plan_requests,
    PlannedRequest,
    request_count,
    request_sampling,
    response_schema,
)

from culturebench.evaluate.wvb.parsing import (  # noqa: F401
    ANSWER_COLUMNS,
    answers_frame,
    COLUMNS,
    DELIMITERS,
    evaluate_answers,
    scan_answers,
    read_responses,
    sniff_delimiter,
)

from culturebench.evaluate.wvb.intervals import (  # noqa: F401
    add_intervals,
    bootstrap_intervals,
    BOOTSTRAP_NOTE,
    DIFFERENCE_KINDS,
    GROUP_COLUMNS,
    group_sizes,
    PatternRows,
    W1Bootstrap,
)

from culturebench.evaluate.wvb.scoring import (  # noqa: F401
    MAJORITY_DEFINITIONS,
    out_of_scale_report,
    score,
    score_answers,
    ScoreResult,
)

from culturebench.evaluate.wvb.plots import (  # noqa: F401
    histograms_png,
    MAX_HISTOGRAMS,
    threshold_curve_png,
    write_run,
)

from culturebench.evaluate.wvb.run import (  # noqa: F401
    cli_check,
    cli_evaluate,
    cli_score,
    CONFIG_KEYS,
    evaluate,
    read_config,
)

from culturebench.evaluate.wvb.comparison import (  # noqa: F401
    COMPARE,
    compare_runs,
    comparison_tables,
    GROUP_TABLES,
    groups_png,
    REPORT_THRESHOLDS,
    run_answers,
    threshold_curves_png,
)
