"""Liu, Kaneko and Chu 2025's questionnaire and prompts in another language (issue #61): ``culturebench generate
wvb_translate --language Swahili --source RAW --out RAW``, so that ``evaluate wvb --protocol liu2025 --steer
language --translations RAW/liu2025_translations`` can steer any country of the release by its questionnaire's
language, not only their ten.

Reads their repository at ``SOURCE/liu2025/`` (default SOURCE: ``raw``, as ``evaluate``'s ``raw/liu2025``): the English questionnaire
(``dataset/questions/WV7_English.jsonl``), and, through ``liu2025.LiuRepo.prompt_pieces`` (their ``utils/common.py``
read as data), the text of their English prompts: plain, persona and few-shot for each country of ``--only``
(ISO alpha-3 codes; default: every country ``facts/liu2025_countries.csv`` gives this language) and the five-shot
files those prompts read. Each text (a question, an option, a sentence of a prompt, a line of a five-shot file, with
placeholders, backticked field names, option numbers and distributions kept out of it) is translated by its own
request (``facts/opinions.json`` ``translation``: ours, greedy, one retry at temperature 0.7 for an empty answer or
the English text again). Writes into ``OUT/liu2025_translations/``:

- ``WV7_<Language>.jsonl``: their shape (id, question, choices, choice_keys, answer as ``key. choice`` lines,
  type), the questions whose every text was translated (the others left out and counted: ``evaluate`` says so);
- ``WV7_<Language>.prompts.json``: ``texts`` (English prompt text -> translation), ``files`` (five-shot file ->
  translation) and ``provenance`` (machine-translated, by which model, from which files);
- ``TRANSLATED.md``: the same, in words.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from culturebench.contract import Generator
from culturebench.options import GenerateOptions, option
from culturebench.errors import InputError
from culturebench.generation.common import (
    QUOTES, GenerationRun, clean_translation, request, unusable_translation, write_atomic)

TASK = "wvb_translate"
FOLDER = "liu2025_translations"
"""The folder under OUT that receives the files (``evaluate --translations`` reads it)."""
_KEPT = re.compile(r"(\{[^{}]*\}|\$\{[^{}]*\}|`[^`]*`|^'\d+'\.\s*|\n)", re.MULTILINE)
"""What is never translated: distributions, placeholders, field names, option numbers, line breaks."""
_LETTER = re.compile(r"[^\W\d_]")


def translation_facts() -> dict:
    from culturebench.facts import read

    return read("opinions")["translation"]


def units(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (translated?, part): the parts ``_KEPT`` names and the parts without a letter stay."""
    return [(bool(part) and not _KEPT.fullmatch(part) and bool(_LETTER.search(part)), part)
            for part in _KEPT.split(text) if part]


def core(part: str) -> tuple[str, str, str]:
    """(leading whitespace, the text, trailing whitespace)."""
    stripped = part.strip()
    start = part.index(stripped)
    return part[:start], stripped, part[start + len(stripped):]


def translation_request(text: str, language: str, seed: int, attempt: int):
    t = translation_facts()
    return request([("system", t["system"]), ("user", t["prompt"].format(language=language, text=text))],
                   temperature=t["temperature"] if attempt == 0 else t["retry_temperature"],
                   max_tokens=t["max_tokens"], seed=seed, sample_index=attempt)


def translated_text(answer: str | None, english: str) -> tuple[str, str | None]:
    """(the translation read from an answer, why it is not usable or None): ``clean_translation``'s, but quotes
    that end the English text as well are kept (a question may end in one)."""
    text = clean_translation(answer or "")
    raw = (answer or "").strip()
    for quote in {english[:1], english[-1:]} & set(QUOTES):
        if english.startswith(quote) and raw.startswith(quote) and not text.startswith(quote):
            text = quote + text
        if english.endswith(quote) and raw.endswith(quote) and not text.endswith(quote):
            text += quote
    return text, unusable_translation(text, english)


def generate(backend, out: Path, *, language: str, source: Path, countries: list[str] | None = None,
             seed: int = 0, limit: int | None = None, console: Console | None = None) -> dict:
    """Translate and write ``OUT/liu2025_translations/WV7_<language>.jsonl`` and ``.prompts.json`` (``limit``: their
    first questions only, for demos); the summary."""
    from culturebench.evaluate.wvb.liu2025 import PLAIN_LANGUAGE, PROMPTS_SUFFIX, LiuRepo, country_table

    repo = LiuRepo(Path(source) / "liu2025")
    codes = countries or [code for code, row in country_table().items()
                          if (repo.dicts.get("country_language_dict", {}).get(row["name"]) or row["language"])
                          == language]
    prompts: list = [repo.prompt_pieces(None, None)]
    for code in codes:
        country = repo.country(code, "persona")
        prompts.append(repo.prompt_pieces("persona", country))
        few_shot = repo.prompt_pieces("few-shot", country)
        if all((repo.root / p.value).is_file() for p in few_shot if p.kind == "file"):
            prompts.append(few_shot)
    texts = list(dict.fromkeys(p.value for pieces in prompts for p in pieces if p.kind == "text" and p.value.strip()))
    files = list(dict.fromkeys(p.value for pieces in prompts for p in pieces if p.kind == "file"))
    questions = [repo.questions(PLAIN_LANGUAGE)[q] for q in repo.question_set()][:limit]
    file_text = {name: repo.text_file(name) for name in files}
    wholes = texts + [row["question"] for row in questions] + [c for row in questions for c in row["choices"]] \
        + list(file_text.values())
    parts = list(dict.fromkeys(core(part)[1] for whole in wholes for keep, part in units(whole) if keep))
    run = GenerationRun(TASK, out, backend, console)
    done: dict[str, str] = {}
    pending = parts
    for attempt in range(2):
        requests = [translation_request(text, language, seed, attempt) for text in pending]
        responses = run.ask(requests, f"wvb translations to {language}" + (" (again)" if attempt else ""))
        failed = []
        for text, req, resp in zip(pending, requests, responses):
            translated, reason = translated_text(resp.text, text)
            run.log("translate", req, resp, english=text, parsed=translated, attempt=attempt, rejected=reason)
            if reason is None:
                done[text] = translated
            else:
                run.reject(reason)
                failed.append(text)
        pending = failed

    def whole(text: str) -> str | None:
        out_parts = []
        for keep, part in units(text):
            if not keep:
                out_parts.append(part)
                continue
            lead, body, trail = core(part)
            if body not in done:
                return None
            out_parts.append(lead + done[body] + trail)
        return "".join(out_parts)

    rows, left_out = [], []
    for row in questions:
        question, choices = whole(row["question"]), [whole(c) for c in row["choices"]]
        if question is None or None in choices:
            left_out.append(row["id"])
            continue
        answer = "\n".join(f"{key}. {choice}" for key, choice in zip(row["choice_keys"], choices))
        rows.append({"id": row["id"], "question": question, "choices": choices, "choice_keys": row["choice_keys"],
                     "answer": answer, "type": row.get("type")})
    target = Path(out) / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    model = getattr(backend, "model", None)
    provenance = {"machine_translated": True, "model": model, "task": f"culturebench generate {TASK}",
                  "from": [str(Path("liu2025") / "dataset" / "questions" / "WV7_English.jsonl"),
                           str(Path("liu2025") / "utils" / "common.py"), *(str(Path("liu2025") / f) for f in files)],
                  "countries": codes, "prompt": translation_facts()["source"]}
    table = {"language": language, "provenance": provenance,
             "texts": {t: w for t in texts if (w := whole(t)) is not None},
             "files": {f: w for f, text in file_text.items() if (w := whole(text)) is not None}}
    questionnaire = target / f"WV7_{language}.jsonl"
    write_atomic(questionnaire, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    prompts_file = target / f"WV7_{language}{PROMPTS_SUFFIX}"
    write_atomic(prompts_file, json.dumps(table, indent=2, ensure_ascii=False) + "\n")
    write_atomic(target / "TRANSLATED.md", (
        f"# Liu, Kaneko and Chu 2025's questionnaire and prompts, machine-translated to {language}\n\n"
        f"`{questionnaire.name}` holds {len(rows)} of their {len(questions)} questions with their options, and "
        f"`{prompts_file.name}` {len(table['texts'])} texts of their prompts and {len(table['files'])} five-shot "
        f"files, translated by the model `{model}` (`culturebench generate {TASK}`; prompt and settings in "
        "culturebench's facts/opinions.json, `translation`). Not reviewed by a translator; not the authors' "
        "translations.\n"))
    summary = {"output": str(questionnaire), "prompts": str(prompts_file), "language": language, "countries": codes,
               "questions": len(questions), "translated_questions": len(rows), "left_out": left_out,
               "texts": len(parts), "seed": seed}
    summary["summary_file"] = str(run.close(summary))
    return summary


@dataclass(frozen=True, kw_only=True)
class TranslateOptions(GenerateOptions):
    language: str | None = option(help="The language to translate into, named as their WV7_<Language>.jsonl "
                                       "files name theirs (Swahili, French, ...).")

    def check(self) -> None:
        super().check()
        if not self.language or not re.fullmatch(r"[A-Za-z][A-Za-z -]*", self.language):
            raise InputError("wvb_translate needs --language, an English language name (e.g. Swahili)")


class TranslateGenerator(Generator):
    """``culturebench generate wvb_translate --language L``: Liu et al.'s questionnaire and prompts in L."""

    name = TASK
    title = "Liu, Kaneko and Chu 2025's questionnaire and prompts translated (language steering for any country)"
    Options = TranslateOptions

    def generate(self, backend, options: TranslateOptions, console: Console | None = None
                 ) -> tuple[str, list[Path]]:
        from culturebench.evaluate.wvb.liu2025 import DEFAULT_REPO

        only = None if options.only is None else [c.strip() for c in options.only.split(",") if c.strip()]
        s = generate(backend, options.out, language=options.language, source=options.source or DEFAULT_REPO.parent,
                     countries=only, seed=options.seed, limit=options.limit, console=console)
        line = (f"wvb_translate: {s['translated_questions']} of {s['questions']} questions translated to "
                f"{s['language']} ({len(s['left_out'])} left out: a text still untranslated after a retry); "
                f"prompts for {', '.join(s['countries']) or 'the plain prompt only'}")
        return line, [Path(s["output"]), Path(s["prompts"]), options.out / FOLDER / "TRANSLATED.md",
                      Path(s["summary_file"])]


GENERATOR = TranslateGenerator()
