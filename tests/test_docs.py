"""The README is the front page and docs/ the manual (issue #44): their shape, their links, and no commit hashes."""

import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
BENCHMARKS = ("wvb", "cdeval", "normad", "llm_globe", "socialcc")


def test_readme_is_a_front_page_of_at_most_300_lines():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


def test_the_manual_has_a_page_per_benchmark_and_per_topic():
    expected = [f"benchmarks/{name}.md" for name in BENCHMARKS] + [
        "README.md", "evaluating.md", "release-format.md", "performance.md"]
    assert [page for page in expected if not (REPO / "docs" / page).is_file()] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_commit_hashes(page):
    """A hash means nothing to a reader of the docs; a date and what changed does."""
    text = page.read_text(encoding="utf-8")
    hashes = [word for word in re.findall(r"\b[0-9a-f]{7,40}\b", text)
              if re.search(r"[a-f]", word) and re.search(r"[0-9]", word)]
    assert hashes == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_relative_links_reach_a_file_and_heading(page):
    text = page.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.is_file() and anchor not in headings(file):
            broken.append(target)
    assert broken == []


def headings(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    outside_code = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in outside_code.splitlines() if line.startswith("#")}


def test_quick_start_test_command_is_what_ci_runs():
    """The quick start's second command is the one .ci/run runs."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    test_command = block.strip().splitlines()[1].split("#", 1)[0].strip()
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert test_command == ci[-1]


PACKAGE = REPO / "src" / "culturebench"
FILE_SUFFIXES = {"json", "jsonl", "csv", "tsv", "yaml", "yml", "md", "py", "txt", "html", "parquet", "png", "sqlite",
                 "pdf", "gz", "zip", "sav", "dta", "toml", "log", "lock", "gguf", "safetensors", "sh", "cfg", "ini"}
NOT_OURS = {
    # sections of the JSON files culturebench writes (manifest.json, metrics.json, run.json): `provenance.zones`
    "provenance", "accounting", "validation", "constants", "baselines", "hofstede", "open", "closed", "metrics",
    "runner", "release", "backend", "error", "covers", "evaluation", "countries",
    # other packages: `vllm.SamplingParams.logprobs`
    "vllm", "polars", "pyarrow", "datasets", "huggingface_hub", "inspect_ai", "lm_eval", "mlcroissant", "pandera",
    "great_expectations", "scipy", "numpy", "ray", "typer", "click", "openai",
}
"""Roots of dotted names that are not culturebench's code unless they resolve as such (``runner.stream_requests``
is code, ``runner.failed`` a run.json field)."""
DOTTED = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?`")


def module_names() -> dict[str, Path]:
    """Dotted module name -> source file of every module of the package."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def defined_names(body: list) -> dict[str, list]:
    """Name -> the body of what it names (a class's statements; [] for anything else) of a module's or class's
    top-level statements: functions, classes, assignments (dataclass fields included) and imports."""
    import ast

    out: dict[str, list] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = []
        elif isinstance(node, ast.ClassDef):
            out[node.name] = node.body
        elif isinstance(node, ast.Assign):
            out.update({t.id: [] for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = []
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update({(a.asname or a.name).split(".")[0]: [] for a in node.names})
        elif isinstance(node, (ast.If, ast.Try)):
            out.update(defined_names(node.body))
    return out


@cache
def code_index() -> tuple[dict[str, dict], dict[str, list[list]], set[str]]:
    """Module -> its names; class name -> the bodies of the classes of that name; every name defined anywhere."""
    import ast

    modules, classes, everything = {}, {}, set()
    for name, path in module_names().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules[name] = defined_names(tree.body)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append(node.body)
                everything.update(defined_names(node.body))
        everything.update(modules[name])
    return modules, classes, everything


def resolves(parts: list[str], names: dict[str, list]) -> bool:
    """Whether ``parts`` are a chain of names defined in ``names`` (a module's or a class's)."""
    if not parts:
        return True
    if parts[0] not in names:
        return False
    body = names[parts[0]]
    return len(parts) == 1 or bool(body) and resolves(parts[1:], defined_names(body))


def quoted_code_names(text: str) -> set[str]:
    """The backticked dotted names of a page that are not file names (``metrics.json``) or URLs."""
    return {name for name in DOTTED.findall(text) if name.rsplit(".", 1)[1].lower() not in FILE_SUFFIXES}


def unknown_code_names(text: str, modules: dict[str, dict], classes: dict[str, list[list]],
                       everything: set[str]) -> list[str]:
    """The quoted code names that name nothing: a dotted name starting at a module (its full name, or its last
    parts: ``run_folder.hold_run_folder``, ``builders.normad.zones_for``) or a class (``Benchmark.rai_facts``) must
    name something defined there; a name starting at neither whose last part is defined somewhere in the package
    (``runs.stream_records``, after runs.py became run_folder.py) names a module that does not exist. Names rooted
    in ``NOT_OURS`` (JSON fields, other packages) are left alone unless they resolve."""
    unknown = []
    for name in sorted(quoted_code_names(text)):
        parts = name.split(".")
        roots = []
        for k in range(len(parts), 0, -1):
            head = ".".join(parts[:k])
            roots += [(modules[m], parts[k:]) for m in modules if m == head or m.endswith("." + head)]
        roots += [(defined_names(body), parts[1:]) for body in classes.get(parts[0], [])]
        if any(resolves(rest, names) for names, rest in roots) or parts[0] in NOT_OURS:
            continue
        if roots or parts[-1] in everything:
            unknown.append(name)
    return unknown


def test_the_code_name_check_finds_a_renamed_module_and_passes_real_names():
    index = code_index()
    page = ("`run_lock.hold_run_folder`, `culturebench.registry.benchmark`, `Benchmark.rai_facts`, "
            "`builders.normad.zones_for`, `metrics.json`, `provenance.zones`, `runner.failed`, `runner.stream_requests`")
    assert unknown_code_names(page, *index) == []
    assert unknown_code_names("`runs.stream_records` and `run_folder.no_such_thing`", *index) == [
        "run_folder.no_such_thing", "runs.stream_records"]
    assert unknown_code_names("`culturebench.evaluate.nowhere` `culturebench.registry.nothing`", *index) == [
        "culturebench.evaluate.nowhere", "culturebench.registry.nothing"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_code_name_the_docs_quote_exists(page):
    """A backticked module, function, class or constant (``culturebench.x.y``, ``run_folder.hold_run_folder``) names
    something the package defines: a rename leaves no stale name in the docs."""
    assert unknown_code_names(page.read_text(encoding="utf-8"), *code_index()) == []


NEEDS_A_MODEL = ("--base-url", "serve-local", "local-model", "--backend vllm", "runs/local")
"""README commands that ask a served model (or read the run it made): not run by the default suite."""


def readme_commands() -> list[str]:
    """The ``culturebench`` command lines of the README's bash blocks after the quick start, comments dropped."""
    readme = (REPO / "README.md").read_text(encoding="utf-8").split("## One example per command", 1)[1]
    blocks = re.findall(r"^```bash\n(.*?)^```", readme, flags=re.M | re.S)
    lines = [line.split("  #", 1)[0].strip() for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    return [line for line in lines if line.startswith("culturebench ")]


def test_the_readmes_model_free_examples_run_as_written_after_the_quick_start(bundled_release, tmp_path, monkeypatch):
    """Every README command that asks no model runs as written, in order, in a folder as the quick start leaves it
    (the bundled releases in releases/, raw/ and examples/ beside them): exit 0."""
    import shlex
    import shutil

    from typer.testing import CliRunner

    from culturebench.cli import app

    for name in BENCHMARKS:
        shutil.copytree(bundled_release(name), tmp_path / "releases" / name)
    for folder in ("raw", "examples"):
        (tmp_path / folder).symlink_to(REPO / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # publish --dry-run works offline
    commands = [c for c in readme_commands() if not any(marker in c for marker in NEEDS_A_MODEL)]
    assert any(c.startswith("culturebench diff") for c in commands) and len(commands) >= 8, commands
    for command in commands:
        result = CliRunner().invoke(app, shlex.split(command)[1:])
        assert result.exit_code == 0, (command, result.output)
