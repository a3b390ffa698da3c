"""``culturebench publish`` against a Hub stand-in on 127.0.0.1 (no network): what is sent, license gating, the
rewritten card, no-op and partial re-publishing, and that the uploaded repo loads like the local folder."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import datasets
import pytest
import yaml
from typer.testing import CliRunner

from culturebench import registry
from culturebench.cli import app
from hub_standin import HubStandIn

TOKEN = "hf_standinSECRETtoken0123456789"
RESTRICTED = ("participants", "examples", "probe")
runner = CliRunner()


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants

    with HubStandIn() as server:
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)  # the stand-in speaks LFS only
        yield server


@pytest.fixture
def release(sample_release, tmp_path) -> Path:
    """A private copy of the bundled sample release (tests may rebuild or tamper with it)."""
    return Path(shutil.copytree(sample_release, tmp_path / "rel" / "wvb"))


def publish(*args: str):
    result = runner.invoke(app, ["publish", *map(str, args)])
    assert TOKEN not in result.output
    return result


def card_header(text: str) -> dict:
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def assert_token_only_in_auth_headers(hub: HubStandIn) -> None:
    for request in hub.requests:
        assert TOKEN.encode() not in request.body, request.path
        assert TOKEN not in request.path
        for key, value in request.headers.items():
            assert TOKEN not in value or (key.lower() == "authorization" and value == f"Bearer {TOKEN}"), key
    writes = hub.writes()
    auth = [{k.lower(): v for k, v in r.headers.items()}.get("authorization") for r in writes if "lfs-upload" not in r.path]
    assert auth and set(auth) == {f"Bearer {TOKEN}"}


def test_dry_run_lists_files_and_withheld_configs_and_sends_nothing(hub, release):
    result = publish(release, "--repo-id", "org/wvb", "--dry-run")
    assert result.exit_code == 0, result.output
    out = result.output
    for config in RESTRICTED:
        assert f"withheld {config} " in out and "wvs-terms" in out
    assert "withheld quarantine" in out
    assert "would upload data/questions/full-00000-of-00001.parquet" in out
    for path in ("README.md", "croissant.json", "manifest.json", "validation/report.html", "validation/report.json"):
        assert f"would upload {path} " in out
    assert "data/participants" not in out and "quarantine/duplicate" not in out
    assert hub.writes() == [] and hub.repos == {}


def test_public_publish_withholds_restricted_configs_and_loads_like_the_local_folder(hub, release, tmp_path):
    result = publish(release, "--repo-id", "org/wvb")
    assert result.exit_code == 0, result.output
    files = hub.files("org/wvb")
    assert sorted(files) == [".gitattributes", "README.md", "croissant.json", "data/questions/full-00000-of-00001.parquet",
                             "manifest.json", "validation/report.html", "validation/report.json"]
    assert files["data/questions/full-00000-of-00001.parquet"] == (release / "data/questions/full-00000-of-00001.parquet").read_bytes()
    assert files["manifest.json"] == (release / "manifest.json").read_bytes()
    assert files["croissant.json"] == (release / "croissant.json").read_bytes()  # it marks the withheld configs itself
    create = [r for r in hub.requests if r.path == "/api/repos/create"]
    assert len(create) == 1 and create[0].json()["type"] == "dataset" and create[0].json()["visibility"] == "public"

    # one commit, message with the manifest hash; nothing restricted in any request
    manifest_sha = hashlib.sha256((release / "manifest.json").read_bytes()).hexdigest()
    [commit] = hub.commits("org/wvb")
    assert manifest_sha in commit["summary"]
    assert {kind for kind, _ in commit["operations"]} == {"file", "lfsFile"}
    sent = b"".join(r.body for r in hub.requests) + "".join(r.path for r in hub.requests).encode()
    for config in RESTRICTED:
        assert f"data/{config}/".encode() not in sent
        for path in (release / "data" / config).iterdir():  # no restricted bytes either (by sha256 / content)
            assert hashlib.sha256(path.read_bytes()).hexdigest().encode() not in sent
    assert b"quarantine/duplicate" not in sent
    assert_token_only_in_auth_headers(hub)

    # the card: withheld configs out of the YAML, a section saying how to rebuild, the manifest sha256 recorded
    card = files["README.md"].decode()
    header = card_header(card)
    assert [c["config_name"] for c in header["configs"]] == ["questions"]
    assert [c["config_name"] for c in header["dataset_info"]] == ["questions"]
    assert header["culturebench"]["manifest_sha256"] == manifest_sha
    assert header["culturebench"]["withheld_configs"] == ["examples", "participants", "probe", "quarantine"]
    # the sample release was built from the bundled raw/ of this checkout: the recipe rebuilds from there
    assert "## Withheld configs" in card and "culturebench build wvb --raw raw" in card
    manifest = json.loads((release / "manifest.json").read_text())
    assert f"git checkout {manifest['source_commit']['commit']}" in card and "pip install -e ." in card
    assert "pip install 'culturebench" not in card  # no index has it
    assert 'questions = load_dataset("org/wvb", "questions", split="full")' in card
    assert header["configs"][0].get("default") is True  # the release's default (participants) is withheld

    # load_dataset on the uploaded repo's files works for exactly what was uploaded, as on the local folder
    remote = hub.materialize("org/wvb", tmp_path / "clone")
    cache = str(tmp_path / "cache")
    uploaded = datasets.load_dataset(str(remote), "questions", split="full", cache_dir=cache)
    local = datasets.load_dataset(str(release), "questions", split="full", cache_dir=cache)
    assert uploaded.to_list() == local.to_list() and uploaded.features == local.features
    with pytest.raises(ValueError):
        datasets.load_dataset(str(remote), "participants", cache_dir=cache)


def test_republishing_an_unchanged_release_is_a_no_op(hub, release):
    assert publish(release, "--repo-id", "org/wvb").exit_code == 0
    before = len(hub.requests)
    result = publish(release, "--repo-id", "org/wvb")
    assert result.exit_code == 0, result.output
    assert "up to date" in result.output
    assert len(hub.commits("org/wvb")) == 1
    assert all(r.method in ("GET", "HEAD") for r in hub.requests[before:])  # reads only (the diff fetches the remote)


def test_a_rebuilt_release_uploads_only_what_changed(hub, release):
    from culturebench.release import build_release

    from conftest import SAMPLE_RAW

    assert publish(release, "--repo-id", "org/wvb", "--private", "--allow-restricted", "wvs-terms").exit_code == 0
    old = hub.files("org/wvb")
    build_release(registry.benchmark("wvb"), SAMPLE_RAW, release.parent, seed=1, progress=lambda stage: None)  # other splits
    result = publish(release, "--repo-id", "org/wvb", "--private", "--allow-restricted", "wvs-terms")
    assert result.exit_code == 0, result.output
    second = hub.commits("org/wvb")[1]
    sent = {path for _, path in second["operations"]}
    changed = {p for p, data in old.items() if (release / p).is_file() and (release / p).read_bytes() != data}
    assert "data/questions/full-00000-of-00001.parquet" not in sent  # questions do not depend on the seed
    assert changed and sent == changed | {"README.md"}
    assert hub.files("org/wvb")["manifest.json"] == (release / "manifest.json").read_bytes()


def test_private_upload_of_restricted_configs_needs_the_license_flag(hub, release, tmp_path):
    result = publish(release, "--repo-id", "org/wvb", "--private", "--allow-restricted", "wvs-terms")
    assert result.exit_code == 0, result.output
    assert hub.repos["org/wvb"].private
    files = hub.files("org/wvb")
    expected = {o["path"] for o in json.loads((release / "manifest.json").read_text())["outputs"]} | {"manifest.json", ".gitattributes"}
    assert set(files) == expected
    header = card_header(files["README.md"].decode())
    assert {c["config_name"] for c in header["configs"]} == {"participants", "questions", "examples", "probe"}
    assert header["culturebench"]["withheld_configs"] == []
    remote = hub.materialize("org/wvb", tmp_path / "clone")
    cache = str(tmp_path / "cache")
    for config in ("participants", "probe"):
        assert (datasets.load_dataset(str(remote), config, cache_dir=cache).num_rows
                == datasets.load_dataset(str(release), config, cache_dir=cache).num_rows)

    # the same private repo without the flag: the restricted files are deleted in one commit
    result = publish(release, "--repo-id", "org/wvb", "--private")
    assert result.exit_code == 0, result.output
    last = hub.commits("org/wvb")[-1]
    deleted = {path for kind, path in last["operations"] if kind == "deletedFile"}
    assert deleted == {p for p in expected if p.startswith(("data/participants/", "data/examples/", "data/probe/", "quarantine/"))}
    assert {path for kind, path in last["operations"] if kind != "deletedFile"} == {"README.md"}


@pytest.mark.parametrize("args, message", [
    (["--allow-restricted", "wvs-terms"], "needs --private"),
    (["--private", "--allow-restricted", "cc-by-4.0"], "not a license of this release's restricted configs"),
])
def test_bad_gating_flags_are_one_line_errors(hub, release, args, message):
    result = publish(release, "--repo-id", "org/wvb", *args)
    assert result.exit_code == 2 and message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert hub.writes() == []


def test_private_flag_on_an_existing_public_repo_is_refused(hub, release):
    assert publish(release, "--repo-id", "org/wvb").exit_code == 0
    writes = len(hub.writes())
    result = publish(release, "--repo-id", "org/wvb", "--private", "--allow-restricted", "wvs-terms")
    assert result.exit_code == 2 and "exists and is public" in result.output
    assert len(hub.writes()) == writes


def test_no_token_is_an_error_before_anything_is_written(hub, release, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no stored login either
    result = publish(release, "--repo-id", "org/wvb")
    assert result.exit_code == 2 and "HF_TOKEN" in result.output
    assert hub.writes() == []


def test_revision_commits_to_a_new_branch_and_leaves_main_alone(hub, release):
    from culturebench.release import build_release

    from conftest import SAMPLE_RAW

    assert publish(release, "--repo-id", "org/wvb").exit_code == 0
    main = hub.files("org/wvb")
    result = publish(release, "--repo-id", "org/wvb", "--revision", "v2")
    assert result.exit_code == 0, result.output
    assert "created branch v2" in result.output and "up to date" in result.output  # branched from main: same files
    assert hub.files("org/wvb", "v2") == main and len(hub.commits("org/wvb")) == 1
    build_release(registry.benchmark("wvb"), SAMPLE_RAW, release.parent, seed=1, progress=lambda stage: None)
    result = publish(release, "--repo-id", "org/wvb", "--revision", "v2")
    assert result.exit_code == 0, result.output
    assert hub.commits("org/wvb")[-1]["branch"] == "v2"
    assert hub.files("org/wvb") == main
    assert hub.files("org/wvb", "v2")["manifest.json"] == (release / "manifest.json").read_bytes()


def test_a_tampered_release_is_not_published(hub, release):
    card = release / "README.md"
    card.write_text(card.read_text() + "\nextra\n")
    result = publish(release, "--repo-id", "org/wvb")
    assert result.exit_code == 2 and "differ from manifest.json" in result.output
    assert hub.requests == []


def test_normad_stories_are_published_without_the_atlas_background(hub, bundled_release, tmp_path):
    """NormAd's stories are CC BY 4.0 but their background column is Cultural Atlas text: the config goes up
    without that column (the atlas config and the quarantine stay home), and the card and output say so."""
    import polars as pl

    release = bundled_release("normad")
    result = publish(release, "--repo-id", "org/normad")
    assert result.exit_code == 0, result.output
    assert "withheld column background of stories" in result.output and "withheld atlas" in result.output
    files = hub.files("org/normad")
    stories = sorted(p for p in files if p.startswith("data/stories/"))
    local = sorted(str(p.relative_to(release)) for p in (release / "data" / "stories").iterdir())
    assert stories == local and not any(p.startswith(("data/atlas/", "quarantine/")) for p in files)
    for path in stories:
        uploaded = pl.read_parquet(files[path])
        original = pl.read_parquet(release / path)
        assert "background" not in uploaded.columns
        assert uploaded.equals(original.drop("background"))  # every other column, row for row
        background = original["background"].to_list()
    sent = b"".join(r.body for r in hub.requests)
    assert background[0].encode() not in sent
    card = files["README.md"].decode()
    header = card_header(card)
    assert "stories" in [c["config_name"] for c in header["configs"]]
    assert header["culturebench"]["withheld_configs"] == ["atlas", "quarantine"]
    assert header["culturebench"]["withheld_columns"] == {"stories": ["background"]}
    [info] = [c for c in header["dataset_info"] if c["config_name"] == "stories"]
    assert "background" not in [f["name"] for f in info["features"]]
    remote = hub.materialize("org/normad", tmp_path / "clone")
    loaded = datasets.load_dataset(str(remote), "stories", cache_dir=str(tmp_path / "cache"))
    assert "background" not in next(iter(loaded.values())).column_names


class _PageServer:
    """A server on 127.0.0.1 that answers every request with ``status`` and an HTML page (a proxy's or captive
    portal's), or with ``body`` as JSON."""

    def __init__(self, status: int = 200, body: dict | None = None) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        content = (json.dumps(body) if body is not None else "<html><body>Sign in to continue</body></html>").encode()
        kind = "application/json" if body is not None else "text/html"

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_HEAD = do_POST = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> "_PageServer":
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("status, body, message", [
    (200, None, "answered, but not as the Hugging Face Hub API does"),
    (200, {"id": "ORG/wvb", "private": False, "sha": "0" * 40}, "listed no files"),
])
def test_dry_run_against_a_server_that_is_not_the_hub_is_one_line(release, monkeypatch, status, body, message):
    """An HTML page where the Hub's JSON belongs, or a Hub reply without its file list: one line naming the
    endpoint, exit 2, no traceback (and not "cannot reach": it answered)."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with _PageServer(status, body) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        result = publish(release, "--repo-id", "ORG/wvb", "--dry-run")
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert message in line and "Traceback" not in result.output and "cannot reach" not in line, result.output
