"""Reader for saved Cultural Atlas pages (culturalatlas.sbs.com.au): ``RAW/cultural_atlas/<country>/<page>.html``.

The site shows one card per topic of a culture (Core Concepts, Greetings, Religion, Family, Naming, Dates of
Significance, Etiquette, Do's and Don'ts, Communication, Business Culture, ...); a saved page has exactly one
*open* card (``<div class="card page-heading active ...">``) holding the topic's ``<h2>`` and its
``<div class="text-content">``. Inside the text, subsections are introduced by ``<u class="culture-subheading">``
(Etiquette: Basic Etiquette, Eating, Visiting, Gift Giving; Do's and Don'ts: Do's, Don'ts) or by ``<h3>``-``<h6>``
headings; the rest is bullets (``<li>``) and paragraphs (``<p>``/``<div>`` blocks).

The page is parsed with the standard library's :class:`html.parser.HTMLParser` only: nothing is fetched,
executed or rendered; ``<script>``/``<style>``/``<noscript>`` text, the collapsed topic cards, sidebars and data
attributes are ignored. Character references are decoded; each text is whitespace-normalised (every run of
whitespace, including no-break spaces, becomes one space; outer whitespace stripped); empty blocks (``&nbsp;``,
``<br>``) are dropped. Text inside one block is joined as the browser shows it (inline tags such as ``<em>`` add
no space; ``<br>`` is a space).

A file that is not such a page (no ``<h1 class="tc-h1">`` culture title, no open topic card with a heading and a
text-content block) is an :class:`~culturebench.errors.InputError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from culturebench.errors import InputError
from culturebench.io import InputFile, input_name, read_input_text

FOLDER = "cultural_atlas"
BLOCKS = {"p", "div", "li", "ul", "ol", "table", "tr", "td", "th", "blockquote", "section", "article"}
HEADINGS = {"h3", "h4", "h5", "h6"}
IGNORED = {"script", "style", "noscript", "template", "svg"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass(frozen=True)
class AtlasItem:
    """One bullet or paragraph of a page."""

    country: str
    culture: str  # the page's <h1>, e.g. "Chinese Culture"
    topic: str  # the open card's heading, e.g. "Etiquette"
    subsection: str  # the last subheading before the item ("" before any)
    kind: str  # "bullet" or "paragraph"
    text: str
    order: int  # 1-based position on the page
    source_file: str


def normalise(text: str) -> str:
    """Every run of whitespace (no-break spaces included) -> one space, outer whitespace stripped."""
    return " ".join(text.replace("\u00a0", " ").replace("\u200b", "").split())


def _classes(attrs: list[tuple[str, str | None]]) -> set[str]:
    return {c for name, value in attrs if name == "class" and value for c in value.split()}


class _AtlasParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.culture: str | None = None
        self.topic: str | None = None
        self.items: list[tuple[str, str, str]] = []  # (subsection, kind, text)
        self._ignored = 0
        self._h1: list[str] | None = None
        self._div_depth = 0
        self._card_depth: int | None = None  # div depth of the open card
        self._content_depth: int | None = None  # div depth of its text-content
        self._h2: list[str] | None = None
        self._sub: list[str] | None = None
        self._sub_tag: tuple[str, int] | None = None
        self._open_tags: list[str] = []
        self._li = 0
        self._buffer: list[str] = []
        self._subsection = ""
        self.content_seen = False

    # ---------------------------------------------------------------- helpers
    def _flush(self) -> None:
        text = normalise("".join(self._buffer))
        self._buffer = []
        if text:
            self.items.append((self._subsection, "bullet" if self._li else "paragraph", text))

    @property
    def _in_content(self) -> bool:
        return self._content_depth is not None

    # ---------------------------------------------------------------- events
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in IGNORED:
            self._ignored += 1
            return
        classes = _classes(attrs)
        if tag == "div":
            self._div_depth += 1
            if self._card_depth is None and self.topic is None and {"page-heading", "active"} <= classes:
                self._card_depth = self._div_depth
            elif self._card_depth is not None and self._content_depth is None and "text-content" in classes:
                self._content_depth = self._div_depth
                self.content_seen = True
        if tag == "h1" and "tc-h1" in classes and self.culture is None:
            self._h1 = []
        if tag == "h2" and self._card_depth is not None and not self._in_content and self.topic is None:
            self._h2 = []
        if not self._in_content:
            return
        if self._sub is not None:
            if tag not in VOID:
                self._open_tags.append(tag)
            return
        if "culture-subheading" in classes or tag in HEADINGS:
            self._flush()
            self._sub = []
            self._sub_tag = (tag, len(self._open_tags))
            if tag not in VOID:
                self._open_tags.append(tag)
            return
        if tag == "br":
            self._buffer.append(" ")  # a line break inside a block is a space, not a new item
        if tag in BLOCKS:
            self._flush()
        if tag == "li":
            self._li += 1
        if tag not in VOID:
            self._open_tags.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in IGNORED:
            self._ignored = max(0, self._ignored - 1)
            return
        if tag == "h1" and self._h1 is not None:
            self.culture = normalise("".join(self._h1))
            self._h1 = None
        if tag == "h2" and self._h2 is not None:
            self.topic = normalise("".join(self._h2))
            self._h2 = None
        if self._in_content and tag in self._open_tags:
            # close the innermost matching open tag (tolerates unclosed <p>/<li>)
            while self._open_tags:
                popped = self._open_tags.pop()
                self._close(popped)
                if popped == tag:
                    break
        if tag == "div":
            if self._content_depth == self._div_depth:
                self._flush()
                self._content_depth = None
                self._card_depth = -1  # the card's content is done; nothing else is read
            elif self._card_depth == self._div_depth:
                self._card_depth = -1
            self._div_depth -= 1

    def _close(self, tag: str) -> None:
        if self._sub is not None and self._sub_tag is not None and self._sub_tag == (tag, len(self._open_tags)):
            self._subsection = normalise("".join(self._sub))
            self._sub = None
            self._sub_tag = None
            return
        if self._sub is not None:
            return
        if tag in BLOCKS:
            self._flush()
        if tag == "li":
            self._li = max(0, self._li - 1)

    def handle_data(self, data: str) -> None:
        if self._ignored:
            return
        if self._h1 is not None:
            self._h1.append(data)
        if self._h2 is not None:
            self._h2.append(data)
        if self._in_content:
            (self._sub if self._sub is not None else self._buffer).append(data)


def country_from_folder(name: str) -> str:
    """``south_korea`` -> ``South Korea`` (folder names are how the raw layout names countries)."""
    small = {"and", "of", "the"}
    words = name.replace("_", " ").replace("-", " ").split()
    return " ".join(w if (w in small and i) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def parse_page(html: str, name: str, country: str) -> list[AtlasItem]:
    """The items of one saved atlas page; ``name`` is the file named in errors and in ``source_file``."""
    parser = _AtlasParser()
    try:
        parser.feed(html)
        parser.close()
    except Exception as exc:  # noqa: BLE001 - html.parser is lenient; anything it raises: not a page
        raise InputError(f"not a Cultural Atlas page: HTML cannot be parsed ({exc})", file=name) from None
    if not parser.culture:
        raise InputError("not a Cultural Atlas page: no culture title (<h1 class=\"tc-h1\">)", file=name)
    if not parser.topic or not parser.content_seen:
        raise InputError("not a Cultural Atlas page: no open topic card (<div class=\"card page-heading active\"> "
                         "with an <h2> and a text-content block)", file=name)
    if not parser.items:
        raise InputError(f"Cultural Atlas page {parser.topic!r} has no text", file=name)
    return [AtlasItem(country, parser.culture, parser.topic, sub, kind, text, order, name)
            for order, (sub, kind, text) in enumerate(parser.items, start=1)]


def read_page(path: Path, root: Path, country: str | None = None) -> tuple[list[AtlasItem], InputFile]:
    """One page file; the country is its folder's name unless given."""
    name = input_name(path, root)
    data, html, encoding = read_input_text(path, name)
    items = parse_page(html, name, country or country_from_folder(path.parent.name))
    return items, InputFile.from_bytes(path, name, data, len(items), encoding)


def page_files(folder: Path) -> list[Path]:
    """``folder/<country>/*.html`` (and ``.htm``) in name order; an empty or missing folder is an error."""
    if not folder.is_dir():
        raise InputError("missing folder of Cultural Atlas pages", file=folder)
    files = sorted(p for p in folder.glob("*/*") if p.is_file() and p.suffix.lower() in (".html", ".htm"))
    if not files:
        raise InputError("no Cultural Atlas pages (<country>/<page>.html) in the folder", file=folder)
    return files


def read_atlas(folder: Path, root: Path) -> tuple[list[AtlasItem], list[InputFile]]:
    items, inputs = [], []
    for path in page_files(folder):
        page, info = read_page(path, root)
        items += page
        inputs.append(info)
    return items, inputs
