"""culturebench inside other evaluation harnesses: inspect tasks (``inspect_tasks``, ``pip install
'culturebench[inspect]'``) and an lm-evaluation-harness task folder (``lm_eval_export``, ``pip install
'culturebench[lm-eval]'``), both built on ``harness``."""
