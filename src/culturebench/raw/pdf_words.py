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

Per character, Python makes the two C calls nothing else gives (the character's text object and origin), mapped
over the page without a Python loop; the rest is done per text object, per distinct (font, size, character), or with
numpy over the page's columns (:class:`Chars`). On the real codebook, in one process on the 2-core machine
(2026-11-28), the words of the 404 pages took 5.1 CPU s (7.6 with a Python loop per character): about 1.7 s PDFium
loading and closing the pages and their text, 2.4 s the characters, 0.7 s the words; the words are identical (every
page compared).
"""

from __future__ import annotations

import ctypes
from collections import deque
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np
import pypdfium2
import pypdfium2.raw as pdfium_c

Word = dict[str, Any]  # text, x0, x1, top, bottom, fontname (pdfplumber's keys)

X_TOLERANCE = 3.0  # pdfplumber's defaults for extract_words
Y_TOLERANCE = 3.0
LIGATURES = str.maketrans({"ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl", "ﬁ": "fi", "ﬂ": "fl", "ﬆ": "st", "ﬅ": "st"})  # pdfplumber's
WHITESPACE = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
"""The code points ``str.isspace`` is true of (U+3000 is the last)."""
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
    """A page's characters as columns, in content-stream order: code point, pdfminer's box (x0, x1, top, bottom) and
    the font's name (``font``: an index into ``font_names``)."""

    code: np.ndarray
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
    Per character only the two C calls are made (mapped over the page: no Python loop), each origin written by
    PDFium straight into one array; the rest is per text object, per distinct (font, size, character), or numpy."""
    count = _char_count(textpage)
    text = _page_text(textpage, count)
    origins = (ctypes.c_double * (2 * count))()  # x, y per character
    base = ctypes.addressof(origins)
    owner = np.fromiter(map(_text_object, repeat(textpage, count), range(count)), dtype=np.uint64, count=count)
    deque(map(_char_origin, repeat(textpage, count), range(count), range(base, base + 16 * count, 16),
              range(base + 8, base + 16 * count, 16)), maxlen=0)
    xy = np.frombuffer(origins, dtype=np.float64).reshape(-1, 2) if count else np.zeros((0, 2))
    kept = np.flatnonzero(owner)  # 0: a space or line break PDFium generated from the layout
    code = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)[kept]
    addresses, first, of_char = np.unique(owner[kept], return_index=True, return_inverse=True)
    # per text object, taken at its first character on the text page: font, size, descent, name
    sizes, descents, names, metrics = [], [], [], []
    metric_of: dict[tuple[int, float], int] = {}
    metric_list: list[tuple[int, float, dict[str, float]]] = []
    font_names: dict[str, int] = {}
    for obj, at in zip(addresses.tolist(), kept[first].tolist()):
        font = _object_font(obj)
        size = _char_font_size(textpage, at)
        descent, widths = fonts.descent_and_widths(font, size)
        metric = metric_of.get((font, size))
        if metric is None:
            metric = metric_of[(font, size)] = len(metric_list)
            metric_list.append((font, size, widths))
        sizes.append(size)
        descents.append(descent)
        names.append(font_names.setdefault(fonts.name(font), len(font_names)))
        metrics.append(metric)
    # advance widths per distinct (font and size, character)
    pair = np.array(metrics, dtype=np.int64)[of_char] << 21 | code.astype(np.int64)
    pairs, pair_of_char = np.unique(pair, return_inverse=True)
    width_of_pair = np.array([_advance(fonts, *metric_list[p >> 21], chr(p & 0x1FFFFF)) for p in pairs.tolist()])
    advance = width_of_pair[pair_of_char] if len(kept) else np.zeros(0)
    x0 = xy[kept, 0]
    bottom = height - xy[kept, 1] - np.array(descents)[of_char]
    size = np.array(sizes)[of_char]
    # stream order: the page's text objects in order (a space-only one, absent from the text page, as a space at
    # its origin), then characters of objects the page does not list (inside form XObjects) in text-page order
    rank = [-1] * len(addresses)
    position = dict(zip(addresses.tolist(), range(len(addresses))))
    spaces: list[tuple[int, float, float, float, int]] = []  # rank, x, bottom, size, font of a space put back
    matrix, size_out = pdfium_c.FS_MATRIX(), ctypes.c_float()
    ranked = 0
    for k in range(_object_count(page)):
        obj = _page_object(page, k)
        if _object_type(obj) != pdfium_c.FPDF_PAGEOBJ_TEXT:
            continue
        at = position.get(obj)
        if at is not None:
            if rank[at] < 0:
                rank[at], ranked = ranked, ranked + 1
        elif _object_matrix(obj, ctypes.byref(matrix)) and _object_font_size(obj, ctypes.byref(size_out)):
            font = _object_font(obj)
            space_size = size_out.value * (matrix.c ** 2 + matrix.d ** 2) ** 0.5  # scaled by the text's matrix
            space_bottom = height - matrix.f - fonts.descent_and_widths(font, space_size)[0]
            spaces.append((ranked, matrix.e, space_bottom, space_size,
                           font_names.setdefault(fonts.name(font), len(font_names))))
            ranked += 1
    for at in sorted((at for at in range(len(addresses)) if rank[at] < 0), key=lambda at: first[at]):
        rank[at], ranked = ranked, ranked + 1
    put_back = np.array(spaces, dtype=np.float64).reshape(-1, 5)
    order = np.lexsort((np.arange(len(kept) + len(spaces)),
                        np.concatenate([np.array(rank, dtype=np.int64)[of_char], put_back[:, 0].astype(np.int64)])))
    return Chars(np.concatenate([code, np.full(len(spaces), 32, dtype=np.uint32)])[order],
                 np.concatenate([x0, put_back[:, 1]])[order],
                 np.concatenate([x0 + advance, put_back[:, 1]])[order],
                 np.concatenate([bottom - size, put_back[:, 2] - put_back[:, 3]])[order],
                 np.concatenate([bottom, put_back[:, 2]])[order],
                 np.concatenate([np.array(names, dtype=np.int64)[of_char], put_back[:, 4].astype(np.int64)])[order],
                 list(font_names))


def _advance(fonts: Fonts, font: int, size: float, widths: dict[str, float], character: str) -> float:
    width = widths.get(character)
    return width if width is not None else fonts.advance(font, size, character, widths)


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
    n = len(chars.code)
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
    code = chars.code[order]
    space = np.isin(code, WHITESPACE)
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
    letters = np.ascontiguousarray(code[keep]).tobytes().decode("utf-32-le", "surrogatepass")
    heads = keep[first]
    fonts = chars.font[order][heads].tolist()
    return [{"text": letters[a:b].translate(LIGATURES), "x0": float(x0[h]), "x1": right, "top": high, "bottom": low,
             "fontname": chars.font_names[f]}
            for a, b, h, right, high, low, f in zip(first.tolist(), ends.tolist(), heads.tolist(), x1_max.tolist(),
                                                   top_min.tolist(), bottom_max.tolist(), fonts)]
