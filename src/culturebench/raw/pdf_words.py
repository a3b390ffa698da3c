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
  as pdfplumber does. Only upright (unrotated) text is handled, which is all the codebook has.
"""

from __future__ import annotations

import ctypes
from typing import Any

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
_text_object = _plain(pdfium_c.FPDFText_GetTextObject, _VOID, _VOID, _INT)
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


# A character: (text, x0, x1, top, bottom, fontname).
Char = tuple[str, float, float, float, float, str]


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


def _stream_chars(page: int, textpage: int, height: float, fonts: Fonts) -> list[Char]:
    """The page's characters in content-stream order, spaces PDFium left out put back (see the module docstring)."""
    count = _char_count(textpage)
    text = _page_text(textpage, count)
    runs: dict[int, list[Char]] = {}  # text object address -> its characters on the text page
    origin = (ctypes.c_double * 2)()  # x, y of a character's origin, passed by address (cheaper than byref)
    x_address = ctypes.addressof(origin)
    y_address = x_address + ctypes.sizeof(ctypes.c_double)
    current = chars = None
    for index in range(count):
        address = _text_object(textpage, index)
        if not address:  # generated by PDFium: a space or line break it inferred from the layout
            continue
        if address != current:
            current = address
            chars = runs.get(address)
            if chars is None:
                chars = runs[address] = []
                font = _object_font(address)
                size = _char_font_size(textpage, index)
                name = fonts.name(font)
                descent, widths = fonts.descent_and_widths(font, size)
        character = text[index]
        _char_origin(textpage, index, x_address, y_address)
        x0 = origin[0]
        advance = widths.get(character)
        if advance is None:
            advance = fonts.advance(font, size, character, widths)
        bottom = height - origin[1] - descent
        chars.append((character, x0, x0 + advance, bottom - size, bottom, name))
    stream: list[Char] = []
    matrix, size_out = pdfium_c.FS_MATRIX(), ctypes.c_float()
    for k in range(_object_count(page)):
        obj = _page_object(page, k)
        if _object_type(obj) != pdfium_c.FPDF_PAGEOBJ_TEXT:
            continue
        chars = runs.pop(obj, None)
        if chars is not None:
            stream += chars
        elif _object_matrix(obj, ctypes.byref(matrix)) and _object_font_size(obj, ctypes.byref(size_out)):
            # a text object of spaces only: PDFium leaves it out of the text page, pdfminer reads its space
            font = _object_font(obj)
            size = size_out.value * (matrix.c ** 2 + matrix.d ** 2) ** 0.5  # scaled by the text's matrix
            bottom = height - matrix.f - fonts.descent_and_widths(font, size)[0]
            stream.append((" ", matrix.e, matrix.e, bottom - size, bottom, fonts.name(font)))
    for chars in runs.values():  # characters of objects inside form XObjects: text-page order
        stream += chars
    return stream


def _page_text(textpage: int, count: int) -> str:
    """The text page's characters, one per index (PDFium marks a hyphen that ends a line as U+FFFE or U+0002)."""
    buffer = ctypes.create_string_buffer((count + 1) * 2)
    _page_text_units(textpage, 0, count, buffer)
    text = buffer.raw[:count * 2].decode("utf-16-le", errors="surrogatepass")
    if len(text) != count:  # a character outside the BMP took two units: one call per character instead
        text = "".join(chr(_char_unicode(textpage, index)) for index in range(count))
    return text.translate(LINE_END_HYPHENS)


def _words(chars: list[Char]) -> list[Word]:
    """pdfplumber's WordExtractor (upright text, default tolerances) over characters in stream order."""
    words: list[Word] = []
    start = 0
    for end in range(1, len(chars) + 1):
        if end == len(chars) or chars[end][5] != chars[start][5]:  # one font run
            for line in _lines(chars[start:end]):
                words += _line_words(line)
            start = end
    return words


def _lines(chars: list[Char]) -> list[list[Char]]:
    """pdfplumber's cluster_objects by top (chained within Y_TOLERANCE), each line sorted by x0."""
    if len({char[3] for char in chars}) == 1:
        return [sorted(chars, key=_x0)]
    cluster_of: dict[float, int] = {}
    last = None
    for top in sorted({char[3] for char in chars}):
        cluster_of[top] = cluster_of[last] + (top > last + Y_TOLERANCE) if last is not None else 0
        last = top
    lines: dict[int, list[Char]] = {}
    for char in chars:  # stream order within a line before the (stable) sort by x0, as pdfplumber's
        lines.setdefault(cluster_of[char[3]], []).append(char)
    return [sorted(line, key=_x0) for _, line in sorted(lines.items())]


def _x0(char: Char) -> float:
    return char[1]


def _line_words(line: list[Char]) -> list[Word]:
    """A line's words: a word ends at whitespace, a gap over X_TOLERANCE, a step back, or a jump in top."""
    words: list[Word] = []
    word: Word | None = None
    previous: Char | None = None
    for char in line:
        text, x0, x1, top, bottom, _ = char
        if text.isspace():
            word = None
        elif word is None or x0 < previous[1] or x0 > previous[2] + X_TOLERANCE or abs(top - previous[3]) > Y_TOLERANCE:
            word = {"text": LIGATURES.get(text, text), "x0": x0, "x1": x1, "top": top, "bottom": bottom,
                    "fontname": char[5]}
            words.append(word)
        else:
            word["text"] += LIGATURES.get(text, text)
            if x1 > word["x1"]:
                word["x1"] = x1
            if top < word["top"]:
                word["top"] = top
            if bottom > word["bottom"]:
                word["bottom"] = bottom
        previous = char
    return words
