"""A PDF page's words as pdfplumber's ``extract_words(extra_attrs=["fontname"])`` gives them, read with PDFium.

pdfplumber interprets every page's content stream in Python (pdfminer.six): on the 404-page WVS-7 codebook that
took about 0.3 s of CPU per page, nearly all of it tokenising and interpreting the stream and building a dict per
character. PDFium (C++, through pypdfium2) does the same in milliseconds; this module reads its characters (text,
origin, font) and groups them into words with pdfplumber's own rules, so the words, and what is parsed from them,
stay the same:

- characters are taken in content-stream order and split into runs of one font (pdfplumber groups by its
  ``extra_attrs``); a run's characters are clustered into lines by ``top`` (values within ``Y_TOLERANCE`` of
  the previous one chain), each line sorted by ``x0``, and a word ends at whitespace, at a gap wider than
  ``X_TOLERANCE``, when the next character starts left of the last one, or when ``top`` moves by more than
  ``Y_TOLERANCE``;
- a character's box is pdfminer's: ``x0``/``x1`` the pen position before and after it, ``bottom`` at the font's
  descent below the baseline and ``top`` one font size above that;
- PDFium leaves text objects of spaces only out of its text page, which pdfminer reads as a space; they still
  end words and split font runs, so each is put back, in stream order, as a space at the object's origin;
  PDFium's generated spaces and line breaks (it infers them from gaps) are not characters of the stream and are
  skipped, and a line-end hyphen it marks U+0002 (U+FFFE in the page's text) is a ``-``. Ligatures are expanded
  as pdfplumber does. Only upright (unrotated) text is handled, which is all the codebook has;
- a text object's font, size and descent are read once, at its first character on the text page, and hold for all
  its characters (also where PDFium lists them in more than one stretch).

Per character, Python makes the two C calls nothing else gives (the character's text object and origin); the rest
is done per text object, or with numpy over the page's columns (:class:`Chars`). On the real codebook, in one
process on the 2-core machine (2026-11-28), that took the words of the 404 pages from 7.6 to 6.7 CPU s, of which
about 2.1 s is PDFium loading the pages and their text and 1.3 s the two calls per character; the words are
identical (every page compared).
"""

from __future__ import annotations

import ctypes
from typing import Any, NamedTuple

import numpy as np
import pypdfium2
import pypdfium2.raw as pdfium_c

Word = dict[str, Any]  # text, x0, x1, top, bottom, fontname (pdfplumber's keys)

X_TOLERANCE = 3.0  # pdfplumber's defaults for extract_words
Y_TOLERANCE = 3.0
LIGATURES = {"ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl", "ﬁ": "fi", "ﬂ": "fl", "ﬆ": "st", "ﬅ": "st"}  # pdfplumber's
LINE_END_HYPHENS = str.maketrans({"\ufffe": "-", "\x02": "-"})


def _plain(function: Any, restype: Any, *argtypes: Any) -> Any:
    """The same PDFium C function with plain pointer types (``c_void_p``: addresses as ints) instead of
    pypdfium2's typed pointers, which cost a ``ctypes.cast`` per call to compare or to pass on."""
    return ctypes.CFUNCTYPE(restype, *argtypes)(ctypes.cast(function, ctypes.c_void_p).value)


_VOID, _INT, _FLOAT_P = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)
_text_object = _plain(pdfium_c.FPDFText_GetTextObject, ctypes.c_size_t, _VOID, _INT)  # 0: a generated character
_char_origin = _plain(pdfium_c.FPDFText_GetCharOrigin, _INT, _VOID, _INT, _VOID, _VOID)  # x, y by address
_page_object = _plain(pdfium_c.FPDFPage_GetObject, _VOID, _VOID, _INT)
_object_type = _plain(pdfium_c.FPDFPageObj_GetType, _INT, _VOID)
_object_font = _plain(pdfium_c.FPDFTextObj_GetFont, _VOID, _VOID)
_object_font_size = _plain(pdfium_c.FPDFTextObj_GetFontSize, _INT, _VOID, _FLOAT_P)
_object_matrix = _plain(pdfium_c.FPDFPageObj_GetMatrix, _INT, _VOID, ctypes.POINTER(pdfium_c.FS_MATRIX))
_char_count = _plain(pdfium_c.FPDFText_CountChars, _INT, _VOID)
_object_count = _plain(pdfium_c.FPDFPage_CountObjects, _INT, _VOID)
_page_text_units = _plain(pdfium_c.FPDFText_GetText, _INT, _VOID, _INT, _INT, ctypes.c_char_p)
_char_unicode = _plain(pdfium_c.FPDFText_GetUnicode, ctypes.c_uint, _VOID, _INT)
_char_font_size = _plain(pdfium_c.FPDFText_GetFontSize, ctypes.c_double, _VOID, _INT)
_font_descent = _plain(pdfium_c.FPDFFont_GetDescent, _INT, _VOID, ctypes.c_float, _FLOAT_P)
_glyph_width = _plain(pdfium_c.FPDFFont_GetGlyphWidth, _INT, _VOID, ctypes.c_uint32, ctypes.c_float, _FLOAT_P)
_base_font_name = _plain(pdfium_c.FPDFFont_GetBaseFontName, ctypes.c_size_t, _VOID, ctypes.c_char_p,
                         ctypes.c_size_t)


class PdfReadError(Exception):
    """PDFium could not open the file or read a page."""


def open_pdf(path: str) -> pypdfium2.PdfDocument:
    try:
        return pypdfium2.PdfDocument(path)
    except (pypdfium2.PdfiumError, OSError, ValueError) as exc:
        raise PdfReadError(" ".join(str(exc).split()) or type(exc).__name__) from None


def page_words(document: pypdfium2.PdfDocument, index: int, fonts: Fonts | None = None) -> tuple[float, list[Word]]:
    """(page height, words) of the 0-based page ``index``, in pdfplumber's order and with its values; ``fonts``
    (one per document) keeps what was read of its fonts for the next pages."""
    try:
        page = document[index]
    except (pypdfium2.PdfiumError, IndexError) as exc:
        raise PdfReadError(" ".join(str(exc).split()) or type(exc).__name__) from None
    try:
        height = page.get_height()
        textpage = pdfium_c.FPDFText_LoadPage(page.raw)
        if not textpage:
            raise PdfReadError("PDFium could not read the page's text")
        try:
            chars = _stream_chars(ctypes.cast(page.raw, _VOID).value, ctypes.cast(textpage, _VOID).value, height,
                                  fonts or Fonts())
        finally:
            pdfium_c.FPDFText_ClosePage(textpage)
    finally:
        page.close()
    return height, _words(chars)


class Chars(NamedTuple):
    """A page's characters as columns, in content-stream order: text, pdfminer's box (x0, x1, top, bottom) and the
    font's name (``font``: an index into ``font_names``)."""

    text: list[str]
    x0: np.ndarray
    x1: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    font: np.ndarray
    font_names: list[str]


class Fonts:
    """Per font (by address) and size: its name, its descent and its characters' advance widths, in points."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.metrics: dict[tuple[int, float], tuple[float, dict[str, float]]] = {}

    def name(self, font: int) -> str:
        name = self.names.get(font)
        if name is None:
            buffer = ctypes.create_string_buffer(256)
            length = _base_font_name(font, buffer, len(buffer)) if font else 0
            name = self.names[font] = buffer.raw[:length - 1].decode("latin-1") if 0 < length <= 256 else ""
        return name

    def descent_and_widths(self, font: int, size: float) -> tuple[float, dict[str, float]]:
        metrics = self.metrics.get((font, size))
        if metrics is None:
            descent = ctypes.c_float()
            metrics = self.metrics[(font, size)] = (
                descent.value if font and _font_descent(font, size, ctypes.byref(descent)) else 0.0, {})
        return metrics

    @staticmethod
    def advance(font: int, size: float, character: str, widths: dict[str, float]) -> float:
        width = ctypes.c_float()
        advance = widths[character] = width.value if font and _glyph_width(font, ord(character), size,
                                                                             ctypes.byref(width)) else 0.0
        return advance


def _stream_chars(page: int, textpage: int, height: float, fonts: Fonts) -> Chars:
    """The page's characters in content-stream order, spaces PDFium left out put back (see the module docstring).
    Two C calls per character (its text object, its origin) are all the per-character work done in Python; the
    rest is per text object, or numpy over the page."""
    count = _char_count(textpage)
    text = _page_text(textpage, count)
    origins = (ctypes.c_double * (2 * count))()  # x, y per character, written by PDFium at their addresses
    address = ctypes.addressof(origins)
    objects = [0] * count
    for index in range(count):
        objects[index] = _text_object(textpage, index)
        _char_origin(textpage, index, address, address + 8)
        address += 16
    xy = np.frombuffer(origins, dtype=np.float64).reshape(-1, 2) if count else np.zeros((0, 2))
    owner = np.array(objects, dtype=np.uint64)
    kept = np.flatnonzero(owner)  # 0: a space or line break PDFium generated from the layout
    addresses, first, of_char = np.unique(owner[kept], return_index=True, return_inverse=True)
    # per text object, taken at its first character as PDFium's text page gives it: font, size, name, descent
    size, descent, name_of, widths_of = (np.empty(len(addresses)), np.empty(len(addresses)), [], [])
    font_names: dict[str, int] = {}
    for k, (obj, at) in enumerate(zip(addresses.tolist(), kept[first].tolist())):
        font = _object_font(obj)
        size[k] = _char_font_size(textpage, at)
        descent[k], widths = fonts.descent_and_widths(font, size[k])
        name_of.append(font_names.setdefault(fonts.name(font), len(font_names)))
        widths_of.append((font, widths))
    advance = np.empty(len(kept))
    for j, (k, character) in enumerate(zip(of_char.tolist(), [text[i] for i in kept.tolist()])):
        font, widths = widths_of[k]
        width = widths.get(character)
        advance[j] = width if width is not None else fonts.advance(font, size[k], character, widths)
    x0 = xy[kept, 0]
    bottom = height - xy[kept, 1] - descent[of_char]
    # stream order: the page's text objects in order (a space-only one, absent from the text page, as a space at
    # its origin), then characters of objects the page does not list (inside form XObjects) in text-page order
    by_object = np.argsort(of_char, kind="stable")
    starts = np.searchsorted(of_char[by_object], np.arange(len(addresses) + 1))
    position = {obj: k for k, obj in enumerate(addresses.tolist())}
    order: list[np.ndarray] = []
    spaces: list[tuple[float, float, float, int]] = []  # x, bottom, size, font of a space put back
    listed = np.zeros(len(addresses), dtype=bool)
    matrix, size_out = pdfium_c.FS_MATRIX(), ctypes.c_float()
    for k in range(_object_count(page)):
        obj = _page_object(page, k)
        if _object_type(obj) != pdfium_c.FPDF_PAGEOBJ_TEXT:
            continue
        at = position.get(obj)
        if at is not None:
            if not listed[at]:
                order.append(by_object[starts[at]:starts[at + 1]])
                listed[at] = True
        elif _object_matrix(obj, ctypes.byref(matrix)) and _object_font_size(obj, ctypes.byref(size_out)):
            font = _object_font(obj)
            space_size = size_out.value * (matrix.c ** 2 + matrix.d ** 2) ** 0.5  # scaled by the text's matrix
            space_bottom = height - matrix.f - fonts.descent_and_widths(font, space_size)[0]
            order.append(np.array([len(kept) + len(spaces)]))
            spaces.append((matrix.e, space_bottom, space_size, font_names.setdefault(fonts.name(font), len(font_names))))
    for at in np.flatnonzero(~listed)[np.argsort(first[~listed], kind="stable")]:
        order.append(by_object[starts[at]:starts[at + 1]])
    order_index = np.concatenate(order) if order else np.zeros(0, dtype=np.int64)
    put_back = np.array(spaces, dtype=np.float64).reshape(-1, 4)
    all_text = [text[i] for i in kept.tolist()] + [" "] * len(spaces)
    all_x0 = np.concatenate([x0, put_back[:, 0]])
    all_x1 = np.concatenate([x0 + advance, put_back[:, 0]])
    all_bottom = np.concatenate([bottom, put_back[:, 1]])
    all_top = np.concatenate([bottom - size[of_char], put_back[:, 1] - put_back[:, 2]])
    all_font = np.concatenate([np.array(name_of, dtype=np.int64)[of_char], put_back[:, 3].astype(np.int64)])
    return Chars([all_text[i] for i in order_index.tolist()], all_x0[order_index], all_x1[order_index],
                 all_top[order_index], all_bottom[order_index], all_font[order_index], list(font_names))


def _page_text(textpage: int, count: int) -> str:
    """The text page's characters, one per index (PDFium marks a hyphen that ends a line as U+FFFE or U+0002)."""
    buffer = ctypes.create_string_buffer((count + 1) * 2)
    _page_text_units(textpage, 0, count, buffer)
    text = buffer.raw[:count * 2].decode("utf-16-le", errors="surrogatepass")
    if len(text) != count:  # a character outside the BMP took two units: one call per character instead
        text = "".join(chr(_char_unicode(textpage, index)) for index in range(count))
    return text.translate(LINE_END_HYPHENS)


def _words(chars: Chars) -> list[Word]:
    """pdfplumber's WordExtractor (upright text, default tolerances) over characters in stream order: runs of one
    font; in each run, lines of tops chained within Y_TOLERANCE (in order of top), each sorted by x0 (stable: stream
    order among equals); a word ends at whitespace, a gap over X_TOLERANCE, a step back or a jump in top."""
    n = len(chars.text)
    if n == 0:
        return []
    run = np.concatenate([[0], np.cumsum(chars.font[1:] != chars.font[:-1])])
    # lines: per run, its distinct tops in order, a new line where one is more than Y_TOLERANCE above the last
    by_top = np.lexsort((chars.top, run))
    run_sorted, top_sorted = run[by_top], chars.top[by_top]
    distinct = np.ones(n, dtype=bool)
    distinct[1:] = (run_sorted[1:] != run_sorted[:-1]) | (top_sorted[1:] != top_sorted[:-1])
    tops, runs = top_sorted[distinct], run_sorted[distinct]
    new_line = np.ones(len(tops), dtype=bool)
    new_line[1:] = (runs[1:] != runs[:-1]) | (tops[1:] > tops[:-1] + Y_TOLERANCE)
    line = np.empty(n, dtype=np.int64)
    line[by_top] = np.cumsum(new_line)[np.cumsum(distinct) - 1]
    order = np.lexsort((np.arange(n), chars.x0, line))
    x0, x1, top, bottom, line = chars.x0[order], chars.x1[order], chars.top[order], chars.bottom[order], line[order]
    text = [chars.text[i] for i in order.tolist()]
    space = np.array([t.isspace() for t in text], dtype=bool)
    starts = np.ones(n, dtype=bool)  # a character that starts a word (when it is not a space)
    starts[1:] = ((line[1:] != line[:-1]) | space[:-1] | (x0[1:] < x0[:-1]) | (x0[1:] > x1[:-1] + X_TOLERANCE)
                  | (np.abs(top[1:] - top[:-1]) > Y_TOLERANCE))
    keep = np.flatnonzero(~space)
    if len(keep) == 0:
        return []
    first = np.flatnonzero(starts[keep])
    ends = np.append(first[1:], len(keep))
    x1_max = np.maximum.reduceat(x1[keep], first)
    top_min = np.minimum.reduceat(top[keep], first)
    bottom_max = np.maximum.reduceat(bottom[keep], first)
    letters = [LIGATURES.get(text[i], text[i]) for i in keep.tolist()]
    heads = keep[first]
    fonts = chars.font[order][heads].tolist()
    return [{"text": "".join(letters[a:b]), "x0": float(x0[h]), "x1": float(right), "top": float(high),
             "bottom": float(low), "fontname": chars.font_names[f]}
            for a, b, h, right, high, low, f in zip(first.tolist(), ends.tolist(), heads.tolist(), x1_max.tolist(),
                                                   top_min.tolist(), bottom_max.tolist(), fonts)]
