"""Free-text search over frame payloads, fast on a million frames, and its highlighting.

A capture too big to hold in memory keeps its frame text in the file
(:mod:`mcp_notebook.lazytext`); reading a million frames back as strings to search them
takes tens of seconds. :func:`text_mask` instead searches the file's bytes where they lie.
With pyarrow installed, the file is mapped into memory and wrapped, without a copy, as one
Arrow string per line; ``pyarrow.compute.match_substring_regex`` (RE2, case-insensitive)
then marks the lines holding the needle or its JSON-escaped form, in about a second per GB.
Without pyarrow, the bytes are scanned in large pieces (``bytes.lower`` and ``bytes.find``)
and each hit is mapped to its row.

A tap record holds more than the frame (time, direction, session): a hit that could lie
there (the needle is in a session name, a key, a direction, looks like a number, or has JSON
punctuation) is checked against the frame's own text, as are the rows of ``verify`` (log
lines, whose records carry other members) and lines with something other than a newline
after them. Text held in memory takes the exact path: ``str.contains``, ignoring case.
"""

from __future__ import annotations

import json
import mmap
import os
import re
from typing import Any

import numpy as np
import pandas as pd

from ..lazytext import LazyTextArray
from ..textsources import FileSource, MultiSource

__all__ = ["text_mask", "search_words", "highlight"]

_CHUNK = 64 << 20
_ESCAPY = re.compile(r"\\|u[0-9a-fA-F]{4}")
_WORD = re.compile(r'(-?)(?:([A-Za-z_]+)(>=|<=|!=|:|>|<|=))?("(?:[^"\\]|\\.)*"|\S+)')


def _exact(values: Any, needle: str) -> np.ndarray:
    s = pd.Series(values, dtype=object, copy=False)
    return s.str.contains(needle, case=False, regex=False, na=False).to_numpy(dtype=bool)


def text_mask(column: pd.Series, needle: str, verify: np.ndarray | None = None,
              sessions: list[str] | None = None) -> np.ndarray:
    """Rows of a text column that contain ``needle``, ignoring case (as ``str.contains``).

    ``verify`` marks rows whose hits are always checked on their text; ``sessions`` are
    the session names a tap record's ``session`` member may hold.
    """
    arr = column.array
    if not isinstance(arr, LazyTextArray):
        return _exact(column.astype(object), needle)
    src = arr.source
    parts = src.parts if isinstance(src, MultiSource) else [src]
    if not all(isinstance(p, FileSource) for p in parts):
        return _exact(column.astype(object), needle)
    if arr._rows is not None and verify is not None:
        v = np.zeros(len(src), dtype=bool)
        v[arr._rows[arr._rows >= 0]] = verify[arr._rows >= 0]
        verify = v
    bases = np.cumsum([0] + [len(p) for p in parts])
    hit = np.concatenate([
        _scan_part(p, needle, None if verify is None else verify[a:b], sessions or [])
        for p, a, b in zip(parts, bases[:-1], bases[1:], strict=True)]) if parts else \
        np.zeros(0, dtype=bool)
    if arr._rows is not None:
        rows = arr._rows
        return np.where(rows >= 0, hit[np.maximum(rows, 0)], False)
    return hit


_STRUCT = ('"ts"', '"dir"', '"session"', '"raw"', '"raw_b64"', "c2s", "s2c", "stderr",
           "meta", "true", "false", "null")


def _has_arrow() -> bool:
    try:
        import pyarrow.compute  # noqa: F401 - optional: the parquet extra
    except ImportError:
        return False
    return True


def _scan_part(src: Any, needle: str, verify: np.ndarray | None,
               sessions: list[str]) -> np.ndarray:
    if not _has_arrow():
        if needle.isascii():
            return _scan(src, needle)
        return _exact(src.texts(np.arange(len(src))), needle)
    return _scan_arrow(src, needle, verify, sessions)


def _needs_check(needle: str, sessions: list[str]) -> bool:
    """Whether a hit of ``needle`` in a tap line may lie outside the frame's text."""
    low = needle.lower()
    if any(c in needle for c in '"\\:,{}[]') or not needle.isprintable():
        return True
    if all(c in "0123456789.-+e " for c in low):
        return True  # the record's time
    if _ESCAPY.search(needle):
        return True
    return any(low in w for w in _STRUCT) or any(low in str(s).lower() for s in sessions)


def _scan_arrow(src: FileSource, needle: str, verify: np.ndarray | None,
                sessions: list[str]) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(src)
    out = np.zeros(n, dtype=bool)
    size = os.path.getsize(src.path)
    if n == 0 or size == 0:
        return _overrides(src, needle, out)
    offsets = np.asarray(src.offsets, dtype=np.int64)
    lengths = np.asarray(src.lengths, dtype=np.int64)
    starts, line_of = np.unique(offsets, return_inverse=True)
    ends = np.append(starts[1:], min(size, int((offsets + lengths).max())))
    # a line whose row does not reach the next line's start (beyond its newline) holds
    # other bytes too: its hits are checked on the text
    row_end = np.zeros(len(starts), dtype=np.int64)
    np.maximum.at(row_end, line_of, offsets + lengths)
    loose = ends - row_end > 2
    # a needle that is not ASCII: RE2 folds its case on UTF-8 text; its escaped forms
    # (\u00e9) are tried in lower and upper case in a second pass, whose hits are checked
    # on the text (as are all hits when upper-casing changes the needle's length: ß -> SS)
    ascii_only = needle.isascii()
    forms = [re.escape(needle)]
    if src.tap is not None:
        for variant in ([needle] if ascii_only else [needle.lower(), needle.upper()]):
            for esc_ascii in (True, False):
                f = re.escape(json.dumps(variant, ensure_ascii=esc_ascii)[1:-1])
                if f not in forms:
                    forms.append(f)
    with open(src.path, "rb") as fh:
        src._check(fh.fileno())
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            data = pa.py_buffer(mm)
            kind = pa.large_binary() if ascii_only else pa.large_string()
            lines = pa.Array.from_buffers(
                kind, len(starts),
                [None, pa.py_buffer(np.append(starts, ends[-1]).astype(np.int64)), data])
            found = pc.match_substring_regex(lines, "|".join(forms if ascii_only else forms[:1]),
                                             ignore_case=True)
            line_hit = found.to_numpy(zero_copy_only=False)
            escaped = np.zeros(len(line_hit), dtype=bool)
            if not ascii_only and len(forms) > 1:
                more = pc.match_substring_regex(lines, "|".join(forms[1:]), ignore_case=True)
                escaped = more.to_numpy(zero_copy_only=False) & ~line_hit
                line_hit = line_hit | escaped
                del more
            del lines, found, data
    hit = line_hit[line_of]
    check = hit & (loose | escaped)[line_of]
    if any(len(c.upper()) != 1 for c in needle):
        check |= hit
    if src.tap is not None:
        tap_rows = np.asarray(src.tap, dtype=bool)
        if _needs_check(needle, sessions):
            check |= hit & tap_rows
        if verify is not None:
            check |= hit & tap_rows & verify
    out[hit & ~check] = True
    cand = np.flatnonzero(check)
    if len(cand):
        out[cand] = _exact(src.texts(cand), needle)
    return _overrides(src, needle, out)


def _scan(src: FileSource, needle: str) -> np.ndarray:
    n = len(src)
    out = np.zeros(n, dtype=bool)
    size = os.path.getsize(src.path)
    if n == 0 or size == 0:
        return _overrides(src, needle, out)
    low = needle.lower()
    forms = [low.encode()]
    if src.tap is not None and json.dumps(low)[1:-1].encode() != forms[0]:
        forms.append(json.dumps(low)[1:-1].encode())
    offsets = np.asarray(src.offsets, dtype=np.int64)
    ends = offsets + np.asarray(src.lengths, dtype=np.int64)
    order = np.argsort(offsets, kind="stable")
    starts_sorted = offsets[order]
    longest = max(len(f) for f in forms)
    with open(src.path, "rb") as fh:
        src._check(fh.fileno())
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            for form in forms:
                hits: list[int] = []
                a = 0
                while a < size:
                    b = min(size, a + _CHUNK)
                    piece = mm[a:min(size, b + longest - 1)].lower()
                    i = piece.find(form)
                    while 0 <= i < b - a:
                        hits.append(a + i)
                        i = piece.find(form, i + 1)
                    a = b
                if not hits:
                    continue
                pos = np.asarray(hits, dtype=np.int64)
                k = np.searchsorted(starts_sorted, pos, side="right") - 1
                rows = order[np.maximum(k, 0)]
                ok = (k >= 0) & (pos + len(form) <= ends[rows])
                pos, rows = pos[ok], rows[ok]
                if src.tap is not None:
                    keep = _in_raw_member(mm, src, pos, rows, len(form), needle)
                    pos, rows = pos[keep], rows[keep]
                out[rows] = True
    if _ESCAPY.search(needle) and out.any():
        cand = np.flatnonzero(out)
        out[cand] = _exact(src.texts(cand), needle)
    return _overrides(src, needle, out)


_RAW_KEY = re.compile(rb'"raw"\s*:\s*"')
_STR_BODY = re.compile(rb'(?:[^"\\]|\\.)*', re.S)


def _in_raw_member(mm: Any, src: FileSource, pos: np.ndarray, rows: np.ndarray,
                   width: int, needle: str) -> np.ndarray:
    """Which hits of tap rows lie inside the record's ``raw`` member (one span per row)."""
    keep = np.ones(len(pos), dtype=bool)
    tap = src.tap
    exact: list[int] = []
    span_row, lo, hi = -1, 0, -1
    for j, (p, r) in enumerate(zip(pos.tolist(), rows.tolist(), strict=True)):
        if tap is not None and not tap[r]:
            continue  # the line is the text itself
        if r != span_row:
            span_row = r
            start, end = int(src.offsets[r]), int(src.offsets[r] + src.lengths[r])
            m = _RAW_KEY.search(mm, start, end)
            if m is None or mm.find(b'"raw_b64"', start, end) >= 0:
                lo, hi = 0, -1
                exact.append(j)
            else:
                lo = m.end()
                body = _STR_BODY.match(mm, lo, end)
                hi = body.end() if body else lo
        keep[j] = lo <= p and p + width <= hi
    if exact:  # records whose text is not a plain raw member: read and compare the text
        rows_x = rows[np.asarray(exact, dtype=np.int64)]
        hit = _exact(src.texts(rows_x), needle)
        keep[np.asarray(exact, dtype=np.int64)] = hit
    return keep


def _overrides(src: FileSource, needle: str, out: np.ndarray) -> np.ndarray:
    if src.overrides:
        rows = np.fromiter(src.overrides, dtype=np.int64)
        out[rows] = _exact([src.overrides[r] for r in rows.tolist()], needle)
    return out


def search_words(query: str) -> list[str]:
    """The free-text words of a filter query (bare words, quoted phrases, ``text:``)."""
    words = []
    for m in _WORD.finditer(query or ""):
        neg, field, value = m.group(1), m.group(2), m.group(4)
        if neg or (field and field.lower() != "text"):
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        if value:
            words.append(value)
    return words


_TAG = re.compile(r"(<[^>]*>)")


def highlight(html_text: str, words: list[str]) -> str:
    """Wrap each case-insensitive occurrence of ``words`` in the text of escaped HTML in
    ``<mark>``; tags and entities are left whole (matching is done on the escaped text)."""
    if not words:
        return html_text
    from .render import esc

    rx = re.compile("|".join(re.escape(esc(w)) for w in sorted(words, key=len, reverse=True)),
                    re.I)
    parts = _TAG.split(html_text)
    stack: list[int] = []  # the <details> a part sits in: opened when it holds a match
    opened: set[int] = set()
    for i, part in enumerate(parts):
        if i % 2:  # a tag
            if part.startswith("<details"):
                stack.append(i)
            elif part.startswith("</details") and stack:
                stack.pop()
            continue
        new, n = rx.subn(lambda m: f'<mark class="mnw-hit">{m.group(0)}</mark>', part)
        if n:
            parts[i] = new
            opened.update(stack)
    for i in opened:
        if " open" not in parts[i]:
            parts[i] = "<details open" + parts[i][len("<details"):]
    return "".join(parts)
