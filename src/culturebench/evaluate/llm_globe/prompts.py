"""LLM-GLOBE prompts, answer parsing and the LLMs-as-a-Jury juror prompt (Karinshak et al. 2024, arXiv 2411.06032,
Sec. 4 and App. B).

- Closed prompts: the release's ``prompt_en`` / ``prompt_zh`` as one user message (the prompt already asks for a
  single integer on the 1-7 scale), sampled ``CLOSED_SAMPLES`` = 3 times at temperature 1.0.
- Open prompts: ``prompt_en`` / ``prompt_zh`` as one user message, one sample at temperature 1.0, the answer capped
  at ``OPEN_MAX_TOKENS`` = 100 tokens; the model answers in the prompt's language.
- Jurors: one user message, the instruction with the dimension's rubric (scale and characteristics) in the juror's
  language, then the original prompt and the response in their original language; the juror returns a whole
  number 1-7, read with the same parser as closed answers.

Source of the juror wording (facts/llm_globe.json, ``juror``): App. B.2 of the paper prints the juror prompt, and
the authors' repository README prints the same words ("Example Prompting for Open-Generation Evaluation") with
other spaces around the line breaks; ``prompt_en`` is the README's string verbatim, with its placeholders for the
dimension, its scale and its characteristics (App. B.1 prints the performance-orientation rubric, the same as the
released rubric file's first row). The Chinese dimension names are
those of the authors' released zh-CN rubrics (facts ``name_zh``). The ``Original prompt:`` / ``Response to rate:``
blocks that carry the question and the answer and the Chinese instruction are ours. A changed template changes the
cache keys: re-run into a new folder.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from culturebench.facts import read as read_facts

SCALE_MIN, SCALE_MAX = 1, 7
TEMPERATURE = 1.0
"""Sec. 4: evaluated models are sampled at temperature 1.0 (closed and open)."""
CLOSED_SAMPLES = 3
"""Sec. 4: every closed prompt is asked three times."""
CLOSED_MAX_TOKENS = 16
"""Enough for a number; ``culturebench evaluate --max-tokens`` overrides it."""
OPEN_SAMPLES = 1
OPEN_MAX_TOKENS = 100
"""Sec. 4: open responses are capped at 100 tokens."""
JUROR_TEMPERATURE = 0.0
"""Ours (not stated in what we could read): jurors answer greedily, so a rerun asks them nothing new."""
JUROR_MAX_TOKENS = 8

LANGUAGES = ("en", "zh")
"""Prompt / juror languages: English and Simplified Chinese (zh-CN)."""

DIMENSIONS = ("Performance Orientation", "Power Distance", "Institutional Collectivism", "In-group Collectivism",
              "Gender Egalitarianism", "Uncertainty Avoidance", "Assertiveness", "Future Orientation",
              "Humane Orientation")
"""The nine GLOBE dimensions in the paper's order (rubrics R-1 ... R-9)."""


@cache
def _facts() -> dict:
    return read_facts("llm_globe")


DIMENSIONS_ZH = {d["name"]: d["name_zh"] for d in _facts()["dimensions"]}
"""The Chinese names of the dimensions as the authors' released zh-CN rubrics write them (facts ``name_zh``; used
in the Chinese juror prompt)."""


def _juror_facts() -> dict:
    return _facts()["juror"]


JUROR_TEMPLATES = {language: _juror_facts()[f"prompt_{language}"] for language in LANGUAGES}
"""App. B.2 / the LLM-GLOBE README (en, verbatim) and our translation (zh)."""
JUROR_BLOCKS = {language: tuple(_juror_facts()[f"blocks_{language}"]) for language in LANGUAGES}


def _key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


_DIMENSION_KEYS = {_key(d): d for d in DIMENSIONS}
_DIMENSION_KEYS["ingroupcollectivisim"] = "In-group Collectivism"  # the source CSV's spelling
_DIMENSION_ZH_KEYS = {zh: en for en, zh in DIMENSIONS_ZH.items()}


def canonical_dimension(name: object) -> str | None:
    """The paper's name of a dimension written as in the release ("performance_orientation", "In-group
    Collectivisim" as in the source CSV...); None when unknown."""
    if name is None:
        return None
    text = str(name).strip()
    return _DIMENSION_ZH_KEYS.get(text) or (_DIMENSION_KEYS.get(_key(text)) if _key(text) else None)


def messages(prompt: str) -> tuple[tuple[str, str], ...]:
    """One user message, no system message."""
    return (("user", prompt),)


def juror_prompt(dimension: str, scale: str, characteristics: str, question: str, response: str,
                 language: str = "en") -> str:
    """The juror's message: instruction + rubric in ``language``, question and response as they were asked and
    answered."""
    if language not in JUROR_TEMPLATES:
        raise ValueError(f"unknown juror language {language!r}")
    name = DIMENSIONS_ZH.get(dimension, dimension) if language == "zh" else dimension
    head = JUROR_TEMPLATES[language].format(dimension=name, scale=str(scale).strip(),
                                            characteristics=str(characteristics).strip())
    q_label, r_label = JUROR_BLOCKS[language]
    return f"{head}\n\n{q_label}\n{str(question).strip()}\n\n{r_label}\n{str(response).strip()}"


# ----------------------------------------------------------------------------------------------- answer parsing

STATUSES = ("ok", "no_number", "out_of_range", "ambiguous", "empty")
"""How a 1-7 answer was read: one whole number 1-7; no number; a number outside 1-7 (or a fraction); several
different numbers; an empty answer. Only "ok" gives a value; nothing is guessed."""

_SCALE_ECHO = re.compile(
    r"(?:\b1\s*(?:-|–|—|~|to|through|至|到)\s*7\b|\bout\s+of\s+7\b|(?<=\d)\s*/\s*7\b|满分\s*7\s*分?|(?:共|总共)\s*7\s*分)",
    re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)?(?![\d])")
_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7}
_ZH_ALONE = re.compile(r"^\s*(?:我的)?(?:评分|分数|答案|回答)?[:：为是]?\s*([一二两三四五六七])\s*分?\s*[。.!！]?\s*$")


def parse_rating(text: str | None) -> tuple[int | None, str]:
    """(value, status) of a 1-7 answer (closed prompt or juror rating).

    The answer is NFKC-normalised (full-width digits), echoes of the scale ("1-7", "out of 7", "5/7") are set
    aside, then it must hold exactly one distinct whole number, between 1 and 7; "5/7" reads 5. A lone Chinese
    numeral ("五", "五分") reads too. Anything else is recorded with its status, never guessed."""
    if text is None or not str(text).strip():
        return None, "empty"
    norm = unicodedata.normalize("NFKC", str(text))
    stripped = _SCALE_ECHO.sub(" ", norm)
    numbers = _NUMBER.findall(stripped)
    if not numbers:
        alone = _ZH_ALONE.match(norm)
        if alone:
            return _ZH_DIGITS[alone.group(1)], "ok"
        return None, "no_number"
    values = set()
    for token in numbers:
        token = token.replace(",", ".")
        if "." in token:
            number = float(token)
            if number != int(number):
                return None, "out_of_range"
            values.add(int(number))
        else:
            values.add(int(token))
    if len(values) > 1:
        return None, "ambiguous"
    value = values.pop()
    if not SCALE_MIN <= value <= SCALE_MAX:
        return None, "out_of_range"
    return value, "ok"


def open_status(text: str | None) -> str:
    """parse_status of an open answer: "ok" when there is text to rate, else "empty"."""
    return "ok" if text is not None and str(text).strip() else "empty"


def reverse_score(value: float | None, reverse: bool, scale_min: int = SCALE_MIN, scale_max: int = SCALE_MAX
                  ) -> float | None:
    """The answer on the dimension's direction (7 = high on the dimension): ``min + max - x`` for a reverse-worded
    item (8 - x on 1-7), ``x`` otherwise."""
    if value is None:
        return None
    return (scale_min + scale_max - value) if reverse else value


@cache
def _templates() -> dict:
    return read_facts("llm_globe")["templates"]


_RATING = {"en": re.compile(r"on a scale of (\d+) to (\d+), where (.+)\.$"),
           "zh": re.compile(r"请用(\d+)到(\d+)分为这一陈述打分，其中(.+)。$")}
"""The rating sentence a closed prompt ends with (facts/llm_globe.json ``templates``: ``item_en`` / ``item_zh``,
Sec. 3.1.1): its scale's ends and its anchors."""
_ANCHOR = {"en": re.compile(r"(?:^|, and |, )(\d+) is "), "zh": re.compile(r"(?:^|，)(\d+)表示")}
"""Where each anchor of the rating sentence starts (``anchor_*``, joined by ``anchor_joiner_*`` and
``anchor_last_joiner_*``): its point."""


def reversed_anchors(prompt: str, language: str) -> str:
    """A closed prompt with its Likert anchors listed from 7 down to 1, each point's code and words kept (issue
    #63's ``reversed``: "... on a scale of 7 to 1, where 7 is strongly disagree, 4 is neither agree nor disagree,
    and 1 is strongly agree."), joined as the templates join them; a prompt whose rating sentence is not the
    templates' is asked as it is (the same request as the paper's: counted as identical, asked once)."""
    found = _RATING[language].search(prompt)
    if found is None:
        return prompt
    low, high, anchors = found.groups()
    marks = list(_ANCHOR[language].finditer(anchors))
    if not marks or marks[0].start() != 0:
        return prompt
    points = [(m[1], anchors[m.end():(marks[i + 1].start() if i + 1 < len(marks) else len(anchors))])
              for i, m in enumerate(marks)]
    t = _templates()
    parts = [t[f"anchor_{language}"].format(point=point, text=text) for point, text in reversed(points)]
    joined = parts[0] if len(parts) == 1 else (t[f"anchor_joiner_{language}"].join(parts[:-1])
                                               + t[f"anchor_last_joiner_{language}"] + parts[-1])
    sentence = (f"on a scale of {high} to {low}, where {joined}." if language == "en"
                else f"请用{high}到{low}分为这一陈述打分，其中{joined}。")
    return prompt[:found.start()] + sentence


VARIANT_PROMPT = {"default": lambda prompt, language: prompt, "reversed": reversed_anchors}
"""How each variant LLM-GLOBE defines changes a closed prompt (the open prompts list no options: asked once)."""
