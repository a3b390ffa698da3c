"""A translated CDEval questionnaire for Sec. 4.2 / Fig. 4 (Wang et al.): ``culturebench generate cdeval_translate
--language de --source RAW --out RAW_DE``.

The paper's German and Chinese questionnaires came from Google Translate and are not published (Sec. 4.2,
footnote 1). This task makes one with a model behind an OpenAI-compatible endpoint instead: every question and
option of the English items in ``SOURCE/cdeval/*.json`` is translated by its own request (``facts/cdeval.json``
``translation``: prompt, language names and settings, all ours; greedy, one retry at temperature 0.7 for an empty
answer or one that is the English text again, or for Chinese one without Chinese characters). An item any of
whose three texts is still untranslated is left out and counted. Writes, in the released format the builder reads:

- ``RAW_DIR/cdeval/CDEval_<language>.json``: ``{Dimension, Domain, Question, Option 1, Option 2, Language}`` in
  the source's order (Dimension and Domain stay the English codes the builder knows);
- ``RAW_DIR/cdeval/TRANSLATED.md``: that the texts are a machine translation, by which model, from which files;
- ``RAW_DIR/hofstede/``: a copy of the source's Hofstede scores when RAW_DIR has none,

so that ``culturebench build cdeval --raw RAW_DIR`` builds the translated release (its manifest and card name the
language) and ``culturebench evaluate cdeval --release ...`` labels the model ``model [<language>]``.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from culturebench.checkout import bundled_raw
from culturebench.contract import Generator
from culturebench.options import GenerateOptions, option
from culturebench.errors import InputError
from culturebench.generation.common import (
    GenerationRun,
    clean_translation,
    has_cjk,
    only_filter,
    request,
    unusable_translation,
    write_atomic,
)

TASK = "cdeval_translate"
TEXT_KEYS = ("Question", "Option 1", "Option 2")
"""The item texts translated (Dimension and Domain are codes the builder reads in English)."""
MAX_TOKENS = 400


def translation_facts() -> dict:
    """``facts/cdeval.json`` ``translation``: our stand-in for the paper's Google Translate (Sec. 4.2)."""
    from culturebench.builders.cdeval import facts

    return facts()["translation"]


def language_name(code: str) -> str:
    """The language named in the prompt for an ISO 639-1 ``code`` (facts ``translation.languages``)."""
    names = translation_facts()["languages"]
    if code not in names:
        raise InputError(f"--language {code!r} is not one we have a name for; choose from {', '.join(names)}")
    return names[code]


def translation_request(text: str, code: str, seed: int, attempt: int):
    t = translation_facts()
    prompt = t["prompt"].format(language_name=language_name(code), text=text)
    return request([("system", t["system"]), ("user", prompt)],
                   temperature=t["temperature"] if attempt == 0 else t["retry_temperature"], max_tokens=MAX_TOKENS,
                   seed=seed, sample_index=attempt)


_LABEL = re.compile(r"^\s*(?:translation|übersetzung|traduction|traducción|\w+ translation)\s*[:：]\s*",
                    re.IGNORECASE)


def translated_text(answer: str | None, english: str, code: str) -> tuple[str, str | None]:
    """(the translation read from an answer, the reason it is not usable or None)."""
    text = _LABEL.sub("", clean_translation(answer or ""))
    reason = unusable_translation(text, english)
    if reason is not None:
        return text, reason
    if code == "zh" and not has_cjk(text):
        return text, "translation has no Chinese characters"
    return text, None


def source_items(source: Path, only: set[str] | None, limit: int | None) -> tuple[list[dict], list[str]]:
    """The English items of ``source/cdeval/*.json`` (read as the builder reads them) in the cells ``--only`` keeps
    (``generation.cdeval.cells``: dimension codes or names, domains), at most ``--limit`` per dimension x domain;
    and the files read."""
    from culturebench.builders.cdeval import dimension_codes, domain_names
    from culturebench.generation.cdeval import cells
    from culturebench.raw.cdeval import DEFAULT_LANGUAGE, QUESTIONNAIRE_FOLDER, input_files, read_questionnaire

    dims = {code.casefold(): code for code in dimension_codes()}
    doms = {name.casefold(): name for name in domain_names()}
    wanted = {(d["code"], domain) for d, domain in cells(only)}
    per_cell: dict[tuple[str, str], int] = {}
    items, names = [], []
    for path in input_files(source / QUESTIONNAIRE_FOLDER, "*.json", "CDEval questionnaire JSON files"):
        read, info = read_questionnaire(path, source, dims, doms)
        names.append(info.name)
        for item in read:
            cell = (item.dimension, item.domain)
            full = limit is not None and per_cell.get(cell, 0) >= limit
            if item.language != DEFAULT_LANGUAGE or cell not in wanted or full:
                continue
            per_cell[cell] = per_cell.get(cell, 0) + 1
            items.append({"Dimension": item.dimension, "Domain": item.domain, "Question": item.question,
                          "Option 1": item.option_1, "Option 2": item.option_2})
    if not items:
        raise InputError("no English CDEval items to translate" + (f" for --only {sorted(only)}" if only else ""),
                         file=source / QUESTIONNAIRE_FOLDER)
    return items, names


def generate(backend, raw_dir: Path, *, language: str, source: Path, seed: int = 0, limit: int | None = None,
             only: set[str] | None = None, console: Console | None = None) -> dict:
    """Translate and write ``RAW_DIR/cdeval/CDEval_<language>.json``; returns the summary."""
    from culturebench.raw.cdeval import HOFSTEDE_FOLDER, LANGUAGE_KEY, QUESTIONNAIRE_FOLDER

    raw_dir, source = Path(raw_dir), Path(source)
    name = language_name(language)
    if (raw_dir / QUESTIONNAIRE_FOLDER).resolve() == (source / QUESTIONNAIRE_FOLDER).resolve():
        raise InputError("--out must not be the --source folder (the translated file would sit beside the English "
                         "items, and a release holds one language)", file=raw_dir)
    items, files = source_items(source, only, limit)
    texts = list(dict.fromkeys(item[key] for item in items for key in TEXT_KEYS))
    run = GenerationRun(TASK, raw_dir, backend, console)
    translations: dict[str, str] = {}
    pending = texts
    for attempt in range(2):
        requests = [translation_request(text, language, seed, attempt) for text in pending]
        responses = run.ask(requests, f"cdeval translations to {language}" + (" (again)" if attempt else ""))
        failed = []
        for text, req, resp in zip(pending, requests, responses):
            translated, reason = translated_text(resp.text, text, language)
            run.log("translate", req, resp, english=text, parsed=translated, attempt=attempt, rejected=reason)
            if reason is None:
                translations[text] = translated
            else:
                run.reject(reason)
                failed.append(text)
        pending = failed
    out_items, untranslated = [], 0
    for item in items:
        if all(item[key] in translations for key in TEXT_KEYS):
            out_items.append({**item, **{key: translations[item[key]] for key in TEXT_KEYS}, LANGUAGE_KEY: language})
        else:
            untranslated += 1
    target = raw_dir / QUESTIONNAIRE_FOLDER
    output = target / f"CDEval_{language}.json"
    write_atomic(output, json.dumps(out_items, indent=4, ensure_ascii=False) + "\n")
    model = getattr(backend, "model", None)
    write_atomic(target / "TRANSLATED.md", (
        f"# CDEval questionnaire, machine-translated to {name} ({language})\n\n"
        f"`CDEval_{language}.json` holds {len(out_items)} items of {', '.join(files)} with their question and "
        f"options translated by the model `{model}` (`culturebench generate cdeval_translate`; prompt and "
        "settings in culturebench's facts/cdeval.json, `translation`). The texts were not reviewed by a translator. "
        "The paper's translated questionnaires (Sec. 4.2, Google Translate) are not published; this is not them.\n"))
    hofstede_copied = False
    if not (raw_dir / HOFSTEDE_FOLDER).exists() and (source / HOFSTEDE_FOLDER).is_dir():
        shutil.copytree(source / HOFSTEDE_FOLDER, raw_dir / HOFSTEDE_FOLDER)
        hofstede_copied = True
    summary = {"output": str(output), "language": language, "language_name": name, "source_files": files,
               "prompt_source": translation_facts()["source"], "seed": seed, "items": len(items),
               "translated_items": len(out_items), "untranslated_items": untranslated, "texts": len(texts),
               "hofstede_copied": hofstede_copied}
    summary["summary_file"] = str(run.close(summary))
    return summary


@dataclass(frozen=True, kw_only=True)
class TranslateOptions(GenerateOptions):
    language: str | None = option(help="The language to translate the items into (de, zh, ...; Fig. 4).")

    def check(self) -> None:
        super().check()
        if not self.language:
            raise InputError("cdeval_translate needs --language (e.g. de or zh, Fig. 4)")


class TranslateGenerator(Generator):
    """``culturebench generate cdeval_translate --language L``: a CDEval questionnaire translated (Fig. 4)."""

    name = TASK
    title = "A CDEval questionnaire translated into another language (Sec. 4.2, Fig. 4)"
    Options = TranslateOptions

    def generate(self, backend, options: TranslateOptions, console: Console | None = None
                 ) -> tuple[str, list[Path]]:
        out = options.out
        s = generate(backend, out, language=options.language, source=options.source or bundled_raw(),
                     seed=options.seed, limit=options.limit, only=only_filter(options.only), console=console)
        line = (f"cdeval_translate: {s['translated_items']} of {s['items']} items translated to "
                f"{s['language_name']} ({s['untranslated_items']} left out: a text still untranslated after a "
                f"retry); rejected: {s['rejected'] or 'none'}")
        return line, [Path(s["output"]), out / "cdeval" / "TRANSLATED.md",
                      out / ".generation" / f"{TASK}.log.jsonl", Path(s["summary_file"])]


GENERATOR = TranslateGenerator()
