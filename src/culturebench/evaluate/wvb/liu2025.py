"""Asking as Liu, Kaneko and Chu 2025 asked (issue #61, ``evaluate wvb --protocol liu2025``): their system
message, instruction and five examples, their questions with their numbered options, their parser, temperature 0.

Everything is read from the user's copy of their repository (nlply/global-opinion-alignment; no licence, so never
shipped): by default ``raw/liu2025/``, else ``--liu-repo``. Their ``utils/common.py`` is read as data, never
imported or run: ``ast`` parses it, and ``prompt_pieces`` walks the string-building statements of its prompt
functions (``prompt = ...``, ``prompt += ...``, ``if country == ...``/``elif``, ``"...".format(human)``,
``read_file_to_string(path)``, ``data['question']``) for one steering method and country, giving the prompt as
pieces: text, a file of theirs (the five examples, ``inputs/few_shot/``), or a field of the question
(``dataset/questions/WV7_<Language>.jsonl``). Any other statement is an InputError naming its line. Also read from
it: the system message and the ``'Answer: '`` split of ``get_api_expressed_distribution``, the two regular
expressions and the tolerance of ``match_api_str`` (``parse_stated``), and the ``country_human_dict`` /
``country_language_dict`` of their ten countries. Other countries take their name, demonym and language from
``facts/liu2025_countries.csv`` (ours).

Steering (``--steer``, their five methods; their spelling ``language_persona``, ``language_few-shot``): persona and
few-shot are English prompts naming the country's people (few-shot: five examples with the country's own
distributions, their ``lang-En_dist-<Country>.txt``); language asks the whole prompt and the question in the
country's questionnaire language (``get_prompt_of_language``), with persona or few-shot likewise. The question of a
language method comes from ``WV7_<Language>.jsonl`` of a ``--translations`` folder when it has one, else of their
``dataset/questions/``; questions that file lacks are left out for that country and said, never asked in English.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

from culturebench.errors import InputError
from culturebench.io import jsonl_objects

DEFAULT_REPO = Path("raw") / "liu2025"
"""Where ``--protocol liu2025`` looks for their repository when ``--liu-repo`` is not given: the raw folder."""
CODE_FILE = "utils/common.py"
QUESTIONS_FOLDER = "dataset/questions"
PLAIN_LANGUAGE = "English"
STEER_METHODS = ("persona", "few-shot", "language", "language-persona", "language-few-shot")
"""``--steer`` under ``--protocol liu2025``: their five methods (README, ``get_prompt_of_rq2``)."""
QUESTION_TYPE = "Opinion-Dependent"
"""Their question set: the rows of WV7_English.jsonl of this type (144)."""
TEMPERATURE = 0.0
"""Issue #61: temperature 0 (their runners, not in the copy, pass ``args.temperature``)."""
MAX_TOKENS = 256
"""``get_llm_expressed_distribution``'s ``max_new_tokens`` (their API calls set no limit)."""
ENGLISH_COUNTERPART = {"language": None, "language-persona": "persona", "language-few-shot": "few-shot"}
"""The English prompt a language method's is the translation of (their language prompts follow these)."""
PROMPTS_SUFFIX = ".prompts.json"
"""``WV7_<Language>.prompts.json`` beside a translated questionnaire: the English prompt texts and five-shot files
in that language (``generate wvb_translate``), for the countries their code has no language prompt for."""


def their_method(method: str) -> str:
    """Our ``--steer`` spelling as their ``steering_method`` (``language-persona`` -> ``language_persona``)."""
    return method.replace("language-", "language_", 1)


@cache
def country_table() -> dict[str, dict[str, str]]:
    """ISO alpha-3 -> name (as their code spells it for their ten), demonym, language; empty for their ten, whose
    demonym and language come from their ``country_human_dict`` / ``country_language_dict``."""
    text = resources.files("culturebench.facts").joinpath("liu2025_countries.csv").read_text(encoding="utf-8")
    return {row["iso_alpha3"]: row for row in csv.DictReader(text.splitlines())}


@dataclass(frozen=True)
class Piece:
    """A part of a prompt: ``text`` as it is, the contents of their ``file``, or the question's ``field``."""

    kind: str
    value: str


@dataclass(frozen=True)
class SteerCountry:
    """A country a steering method names: its code, their name for it, its people and its language."""

    code: str
    name: str
    demonym: str
    language: str


class LiuRepo:
    """The user's copy of Liu et al.'s repository, read as data."""

    def __init__(self, root: Path, translations: Path | None = None) -> None:
        self.root = Path(root)
        self.translations = None if translations is None else Path(translations)
        code = self.root / CODE_FILE
        if not code.is_file():
            raise InputError(f"--protocol liu2025 needs Liu, Kaneko and Chu's repository (nlply/global-opinion-"
                             f"alignment) in the raw folder or at --liu-repo: {CODE_FILE} is missing", file=code)
        self.code_file = code
        try:
            self.module = ast.parse(code.read_text(encoding="utf-8"), filename=str(code))
        except (SyntaxError, UnicodeDecodeError) as exc:
            raise InputError(f"not readable as Python source ({exc})", file=code) from None
        self.functions = {node.name: node for node in self.module.body if isinstance(node, ast.FunctionDef)}
        self.dicts = {node.targets[0].id: ast.literal_eval(node.value) for node in self.module.body
                      if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                      and isinstance(node.targets[0], ast.Name)}

    # ------------------------------------------------------------------------------------------- their constants

    def _function(self, name: str) -> ast.FunctionDef:
        if name not in self.functions:
            raise InputError(f"has no function {name}() (is this their repository?)", file=self.code_file)
        return self.functions[name]

    @cached_property
    def system_message(self) -> str:
        """The system message of ``get_api_expressed_distribution``'s messages."""
        for node in ast.walk(self._function("get_api_expressed_distribution")):
            if isinstance(node, ast.Dict):
                entry = {k.value: v.value for k, v in zip(node.keys, node.values)
                         if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
                if entry.get("role") == "system":
                    return entry["content"]
        raise InputError("get_api_expressed_distribution() has no system message", file=self.code_file)

    @cached_property
    def answer_split(self) -> str:
        """The text ``get_api_expressed_distribution`` splits the reply at (its part after it is parsed)."""
        for node in ast.walk(self._function("get_api_expressed_distribution")):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                return node.args[0].value
        raise InputError("get_api_expressed_distribution() splits no reply", file=self.code_file)

    @cached_property
    def parser(self) -> tuple[str, str, str, float]:
        """``match_api_str``'s pattern, its ``re.sub`` repair (pattern, replacement) and its tolerance on the sum."""
        function = self._function("match_api_str")
        pattern = next((n.value.value for n in ast.walk(function) if isinstance(n, ast.Assign)
                        and getattr(n.targets[0], "id", None) == "pattern" and isinstance(n.value, ast.Constant)), None)
        repair = next((n for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                       and n.func.attr == "sub"), None)
        tolerance = next((n.comparators[0].value for n in ast.walk(function) if isinstance(n, ast.Compare)
                          and isinstance(n.ops[0], ast.Lt) and isinstance(n.comparators[0], ast.Constant)), None)
        if pattern is None or repair is None or tolerance is None:
            raise InputError("match_api_str() is not the parser culturebench reads", file=self.code_file)
        return pattern, repair.args[0].value, repair.args[1].value, float(tolerance)

    # ----------------------------------------------------------------------------------------------- countries

    def country(self, code: str, method: str) -> SteerCountry:
        """The country ``method`` names, by its code: their name, demonym and language for their ten
        (``country_human_dict``, ``country_language_dict``), ours (facts/liu2025_countries.csv) for the others;
        an InputError when neither has it."""
        row = country_table().get(code)
        if row is None:
            raise InputError(f"--steer {method}: no name, demonym and language for country {code} (their ten and "
                             "facts/liu2025_countries.csv lack it)", column="steer_countries")
        name = row["name"]
        demonym = self.dicts.get("country_human_dict", {}).get(name) or row["demonym"]
        language = self.dicts.get("country_language_dict", {}).get(name) or row["language"]
        if not demonym or not language:
            raise InputError(f"--steer {method}: {CODE_FILE} has no demonym or language for {name}",
                             file=self.code_file)
        return SteerCountry(code, name, demonym, language)

    # ------------------------------------------------------------------------------------------------ prompts

    def prompt_pieces(self, method: str | None, country: SteerCountry | None) -> list[Piece]:
        """The prompt of ``method`` (None: unsteered, ``get_prompt_of_rq1``) for ``country`` as pieces, by walking
        their prompt function's statements with ``args.steering_method``, ``args.country`` (their name) and the
        country's demonym bound; an InputError when the method gives that country no prompt."""
        if method is None:
            function, bound = self._function("get_prompt_of_rq1"), {"data": _DATA}
        else:
            args = {"steering_method": their_method(method), "country": country.name}
            function, bound = self._function("get_prompt_of_rq2"), {"args": args, "data": _DATA}
        pieces = _Walker(self, country).call(function, bound)
        if not any(p.kind == "text" and p.value for p in pieces) and method in ENGLISH_COUNTERPART:
            table = self.translated_prompts(country.language)
            if table is not None:
                return self.translated(self.prompt_pieces(ENGLISH_COUNTERPART[method], country), table)
        if not any(p.kind == "text" and p.value for p in pieces):
            raise InputError(f"--steer {method}: {CODE_FILE} has no prompt for {country.name} (their {method} "
                             f"prompts are written for their ten countries; for a language method, --translations "
                             f"with WV7_{country.language}{PROMPTS_SUFFIX} from generate wvb_translate gives one)",
                             file=self.code_file)
        return pieces

    def translated_prompts(self, language: str) -> dict | None:
        """``WV7_<language>.prompts.json`` of the ``--translations`` folder (``texts``: English prompt text ->
        translation; ``files``: their five-shot file -> its translation), or None."""
        if self.translations is None or not (self.translations / f"WV7_{language}{PROMPTS_SUFFIX}").is_file():
            return None
        path = self.translations / f"WV7_{language}{PROMPTS_SUFFIX}"
        try:
            table = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"not JSON ({exc})", file=path) from None
        if not isinstance(table, dict) or not all(isinstance(table.get(k), dict) for k in ("texts", "files")):
            raise InputError("a translated prompts file holds a texts and a files mapping", file=path)
        return {**table, "path": path}

    @staticmethod
    def translated(pieces: Sequence[Piece], table: Mapping) -> list[Piece]:
        """``pieces`` with every text and file in the language of ``table`` (``translated_prompts``); blank text
        stays; one missing is an InputError naming it."""
        out = []
        for piece in pieces:
            if piece.kind == "field" or piece.kind == "text" and not piece.value.strip():
                out.append(piece)
                continue
            found = table["texts" if piece.kind == "text" else "files"].get(piece.value)
            if not isinstance(found, str):
                raise InputError(f"lacks the translation of {piece.kind} {piece.value[:60]!r} (generate "
                                 "wvb_translate for this country)", file=table["path"])
            out.append(Piece("text", found))
        return out

    def steering(self, method: str | None, country: SteerCountry | None) -> tuple[list[Piece], dict[str, dict]]:
        """The prompt pieces of ``method`` for ``country`` (``prompt_pieces``) and the questions it asks (a language
        method: the country's language's questionnaire), its files read now: an InputError names what is missing
        before any request."""
        pieces = self.prompt_pieces(method, country)
        for piece in pieces:
            if piece.kind == "file":
                self.text_file(piece.value)
        language = country.language if method and method.startswith("language") else PLAIN_LANGUAGE
        return pieces, self.questions(language)

    def render(self, pieces: Sequence[Piece], question: Mapping[str, str]) -> str:
        """The prompt's text: pieces joined, their files read as ``read_file_to_string`` reads them (text mode,
        from the repository's root), the question's fields filled in."""
        out = []
        for piece in pieces:
            if piece.kind == "text":
                out.append(piece.value)
            elif piece.kind == "file":
                out.append(self.text_file(piece.value))
            else:
                out.append(question[piece.value])
        return "".join(out)

    @cache
    def text_file(self, relative: str) -> str:
        path = self.root / relative
        if not path.is_file():
            raise InputError("file of Liu et al.'s repository their prompt reads is missing", file=path)
        with open(path, encoding="utf-8") as handle:
            return handle.read()

    # ---------------------------------------------------------------------------------------------- questions

    def questions_file(self, language: str) -> Path:
        """``WV7_<language>.jsonl``: from the ``--translations`` folder when it has it, else their
        ``dataset/questions/``."""
        name = f"WV7_{language}.jsonl"
        if self.translations is not None and (self.translations / name).is_file():
            return self.translations / name
        return self.root / QUESTIONS_FOLDER / name

    @cache
    def questions(self, language: str = PLAIN_LANGUAGE) -> dict[str, dict]:
        """id -> question row (question, choices, choice_keys, answer, type) of ``WV7_<language>.jsonl``."""
        path = self.questions_file(language)
        if not path.is_file():
            where = "the --translations folder or " if self.translations is not None else ""
            raise InputError(f"no questionnaire in {language} ({where}their {QUESTIONS_FOLDER}; make one with "
                             f"culturebench generate wvb_translate)", file=path)
        rows: dict[str, dict] = {}
        for number, row in jsonl_objects(path.read_text(encoding="utf-8").splitlines(keepends=True), path):
            missing = [k for k in ("id", "question", "answer", "choice_keys") if k not in row]
            if missing:
                raise InputError(f"a question row lacks {', '.join(missing)}", file=path, row=number, column=missing[0])
            rows[str(row["id"])] = row
        return rows

    def question_set(self) -> list[str]:
        """Their question ids, in their order: WV7_English.jsonl's "Opinion-Dependent" rows."""
        return [qid for qid, row in self.questions(PLAIN_LANGUAGE).items() if row.get("type", QUESTION_TYPE) == QUESTION_TYPE]

    # ------------------------------------------------------------------------------------------------ parsing

    def parse_stated(self, text: str | None) -> dict[str, float] | None:
        """The distribution a reply states, as theirs reads it: the part after their ``'Answer: '`` split when it
        has one (``get_api_expressed_distribution``), then ``match_api_str``: the first dict of quoted code ->
        'N%' (else after its repair of unquoted ``N: M%``, else the whole reply as a Python literal), accepted when
        its shares sum to within the tolerance of 1; code -> share (percent / 100), or None."""
        if not text:
            return None
        parts = text.split(self.answer_split)
        text = parts[1] if len(parts) > 1 else text
        pattern, repair, replacement, tolerance = self.parser
        for candidate in (text, re.sub(repair, replacement, text)):
            match = re.search(pattern, candidate)
            if match:
                return _accepted(match.group(0), tolerance)
        return _accepted(text, tolerance)


def _accepted(literal: str, tolerance: float) -> dict[str, float] | None:
    try:
        stated = ast.literal_eval(literal)
        shares = {str(k): float(str(v).strip("%")) / 100 for k, v in stated.items()}
    except (ValueError, SyntaxError, TypeError, AttributeError, MemoryError, RecursionError):
        return None
    return shares if shares and abs(sum(shares.values()) - 1.0) < tolerance else None


_DATA = object()
"""The question ``data`` their prompt functions take (its fields become ``Piece("field", name)``)."""


class _Walker:
    """Walks the string-building statements of one of their prompt functions (no code of theirs is run)."""

    def __init__(self, repo: LiuRepo, country: SteerCountry | None = None) -> None:
        self.repo = repo
        self.dicts = {name: dict(table) for name, table in repo.dicts.items()}
        if country is not None:  # a country not among their ten: its demonym and language are ours
            self.dicts.setdefault("country_human_dict", {}).setdefault(country.name, country.demonym)
            self.dicts.setdefault("country_language_dict", {}).setdefault(country.name, country.language)

    def fail(self, node: ast.AST, what: str) -> InputError:
        return InputError(f"line {getattr(node, 'lineno', '?')}: {what} is not a prompt-building statement "
                          f"culturebench reads ({type(node).__name__})", file=self.repo.code_file)

    def call(self, function: ast.FunctionDef, bound: dict) -> list[Piece]:
        names = dict(bound)
        result = self.block(function.body, names)
        return _pieces(result if result is not None else names.get("prompt", ""))

    def block(self, statements: Sequence[ast.stmt], names: dict):
        for node in statements:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a docstring
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                names[node.targets[0].id] = self.value(node.value, names)
            elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
                names[node.target.id] = _pieces(names.get(node.target.id, "")) + _pieces(self.value(node.value, names))
            elif isinstance(node, ast.If):
                result = self.block(node.body if self.value(node.test, names) else node.orelse, names)
                if result is not None:
                    return result
            elif isinstance(node, ast.Return):
                return self.value(node.value, names)
            else:
                raise self.fail(node, "this statement")
        return None

    def value(self, node: ast.expr, names: dict):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise self.fail(node, f"the name {node.id}")
            return names[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args":
            return names["args"][node.attr]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _pieces(self.value(node.left, names)) + _pieces(self.value(node.right, names))
        if isinstance(node, ast.JoinedStr):
            return "".join(self.value(part.value if isinstance(part, ast.FormattedValue) else part, names)
                           for part in node.values)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            key = self.value(node.slice, names)
            if names.get(node.value.id) is _DATA:
                return [Piece("field", key)]
            table = self.dicts.get(node.value.id)
            if table is None or key not in table:
                raise self.fail(node, f"{node.value.id}[{key!r}]")
            return table[key]
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = self.value(node.left, names), node.comparators[0]
            if isinstance(node.ops[0], ast.Eq):
                return left == self.value(right, names)
            if isinstance(node.ops[0], ast.In) and isinstance(right, (ast.List, ast.Tuple)):
                return left in [self.value(item, names) for item in right.elts]
        if isinstance(node, ast.Call):
            return self.called(node, names)
        raise self.fail(node, "this expression")

    def called(self, node: ast.Call, names: dict):
        args = [self.value(a, names) for a in node.args]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            template = self.value(node.func.value, names)
            if isinstance(template, str) and all(isinstance(a, str) for a in args) and not node.keywords:
                return template.format(*args)
        elif isinstance(node.func, ast.Name) and node.func.id == "read_file_to_string" and len(args) == 1:
            return [Piece("file", args[0])]
        elif isinstance(node.func, ast.Name) and node.func.id in self.repo.functions:
            function = self.repo.functions[node.func.id]
            return self.call(function, dict(zip((a.arg for a in function.args.args), args)))
        raise self.fail(node, "this call")


def _pieces(value) -> list[Piece]:
    if isinstance(value, str):
        return [Piece("text", value)] if value else []
    if isinstance(value, list):
        return value
    raise InputError(f"a prompt part of Liu et al.'s {CODE_FILE} is not text ({type(value).__name__})")


# ------------------------------------------------------------------------------------------------ the requests


@dataclass(frozen=True)
class Prompt:
    """One of their prompts for one question: which country it steers to (None: plain) and its text."""

    question_id: str
    steer: str | None
    text: str


def prompts(repo: LiuRepo, question_ids: Sequence[str], method: str | None,
            countries: Sequence[SteerCountry]) -> tuple[Iterator[Prompt], list[str], int]:
    """The plain prompt of every question (WV7_English.jsonl), then, under ``method``, every question's prompt per
    country (a language method: the question in the country's language, ``LiuRepo.questions``); one line per
    country whose questionnaire lacks questions (left out for that country, never asked in English); and how many
    prompts."""
    plain, english = repo.steering(None, None)
    steered = []
    notes = []
    for country in countries:
        pieces, questions = repo.steering(method, country)
        missing = [q for q in question_ids if q not in questions]
        language = country.language if method.startswith("language") else PLAIN_LANGUAGE
        source = repo.questions_file(language)
        if repo.translations is not None and source.parent == repo.translations:
            made = (repo.translated_prompts(language) or {}).get("provenance", {})
            notes.append(f"--steer {method}: {country.name} asked in {language} from {source}" + (
                f", machine-translated by {made.get('model')} (not reviewed)" if made.get("machine_translated") else ""))
        if missing:
            notes.append(f"--steer {method}: the {country.language} questionnaire lacks {', '.join(missing)}: not "
                         f"asked steered to {country.name}")
        steered.append((country, pieces, questions))
    total = len(question_ids) + sum(sum(q in questions for q in question_ids) for _, _, questions in steered)

    def generate() -> Iterator[Prompt]:
        for question_id in question_ids:
            yield Prompt(question_id, None, repo.render(plain, english[question_id]))
            for country, pieces, questions in steered:
                if question_id in questions:
                    yield Prompt(question_id, country.code, repo.render(pieces, questions[question_id]))

    return generate(), notes, total


def messages(repo: LiuRepo, prompt: str) -> tuple[tuple[str, str], ...]:
    """Their conversation: their system message, then the prompt as the user's message."""
    return (("system", repo.system_message), ("user", prompt))
