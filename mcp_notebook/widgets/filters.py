"""A short filter language for the frame table, with its pandas equivalent.

``method:tools/call outcome:error latency>500ms -method:notifications/*``

Terms are separated by spaces and all must hold. ``field:value`` matches (``*`` is a
wildcard, ``a,b`` means either); ``>``, ``>=``, ``<``, ``<=``, ``!=`` compare; a leading
``-`` negates; a bare word (or ``"quoted words"``) searches the raw text, ignoring case.
Fields: ``seq kind method dir session outcome id code latency size ts source stream has
rule info`` (``info:"tools/call add*"`` matches the info line; it reads every line, so on a
big capture a bare word, which searches the frame text, is faster). :func:`apply_filter` returns the boolean mask and the pandas expression text that
gives the same rows on :func:`~.frametable.frame_table`'s DataFrame.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["FilterError", "Filter", "apply_filter", "parse_duration", "parse_size", "FIELDS"]

_STR_FIELDS = {"kind": "kind", "method": "method", "dir": "direction", "direction": "direction",
               "session": "session", "outcome": "outcome", "id": "id_key", "source": "source",
               "stream": "stream", "info": "info"}
_KNOWN = {
    "kind": ["request", "notification", "result", "error", "invalid", "stderr", "log"],
    "direction": ["c2s", "s2c"],
    "outcome": ["result", "error", "tool_error", "unanswered", "cancelled", "orphan",
                "duplicate"],
}
_HAS = {"violation": 'df["has_violation"]', "pair": '(df["pair_seq"] >= 0)',
        "error": '(df["kind"] == "error")', "tool_error": 'df["is_tool_error"]'}
FIELDS = sorted([*_STR_FIELDS, "seq", "code", "latency", "size", "ts", "has", "rule", "text"])
_TERM = re.compile(r'(-?)(?:([A-Za-z_]+)(>=|<=|!=|:|>|<|=))?("(?:[^"\\]|\\.)*"|\S+)')
_DUR = re.compile(r"^([0-9]*\.?[0-9]+)\s*(us|µs|ms|s|m|min|h)?$", re.I)
_SIZE = re.compile(r"^([0-9]*\.?[0-9]+)\s*(b|kb|k|mb|m|gb|g)?$", re.I)
_OPS = {">": "gt", ">=": "ge", "<": "lt", "<=": "le", "=": "eq", ":": "eq", "!=": "ne"}
_PY_OPS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}


class FilterError(ValueError):
    """A filter that cannot be read; the message says how to fix it."""


@dataclass
class Filter:
    """A compiled filter: which rows pass, and the same selection as pandas code."""

    query: str
    mask: np.ndarray
    expr: str

    @property
    def count(self) -> int:
        return int(self.mask.sum())


def parse_duration(text: str) -> pd.Timedelta:
    """``500ms``, ``1.5s``, ``200us``, ``2m``; a bare number is milliseconds."""
    m = _DUR.match(text.strip())
    if not m:
        raise FilterError(f"cannot read duration {text!r}: write e.g. 500ms, 1.5s or 200us")
    unit = (m.group(2) or "ms").lower().replace("µs", "us").replace("min", "m")
    unit = {"m": "min"}.get(unit, unit)
    return pd.Timedelta(f"{m.group(1)}{unit}")


def parse_size(text: str) -> int:
    """``512``, ``10kb``, ``1.5mb`` (binary multiples) as bytes."""
    m = _SIZE.match(text.strip())
    if not m:
        raise FilterError(f"cannot read size {text!r}: write e.g. 512, 10kb or 1mb")
    mult = {"b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3,
            "gb": 1024**3}[(m.group(2) or "b").lower()]
    return int(float(m.group(1)) * mult)


def _glob(pattern: str) -> str:
    """A ``*`` wildcard pattern as an anchored regex (RE2-safe: pyarrow strings use RE2)."""
    return "^" + ".*".join(re.escape(p) for p in pattern.split("*")) + "$"


def _unquote(v: str) -> str:
    if len(v) >= 2 and v[0] == v[-1] == '"':
        return re.sub(r"\\(.)", r"\1", v[1:-1])
    return v


def _cmp(col: str, op: str, value: object, lit: str) -> tuple[Callable, str]:
    def fn(df: pd.DataFrame) -> np.ndarray:
        s = getattr(df[col], op)(value)
        return s.fillna(False).to_numpy(dtype=bool) if hasattr(s, "fillna") else np.asarray(s)

    return fn, f'(df["{col}"] {_PY_OPS[op]} {lit}).fillna(False)'


def _str_term(field: str, col: str, op: str, raw: str) -> tuple[Callable, str]:
    if op not in ("eq", "ne"):
        raise FilterError(f"{field} takes ':' or '!=' (e.g. {field}:value), not a comparison")
    values = [_unquote(v) for v in raw.split(",")] if not raw.startswith('"') else [_unquote(raw)]
    known = _KNOWN.get(col)
    if known:
        for v in values:
            if "*" not in v and v not in known:
                raise FilterError(f"unknown {field} {v!r}: use one of {', '.join(known)}")
    parts_fn, parts_ex = [], []
    for v in values:
        if "*" not in v:
            parts_fn.append(lambda df, v=v: (df[col] == v).to_numpy(dtype=bool))
            parts_ex.append(f'(df["{col}"] == {v!r})')
        elif v.endswith("*") and "*" not in v[:-1]:
            pre = v[:-1]
            parts_fn.append(lambda df, pre=pre: df[col].astype("string").str.startswith(pre)
                            .fillna(False).to_numpy(dtype=bool))
            parts_ex.append(f'df["{col}"].astype("string").str.startswith({pre!r}).fillna(False)')
        else:
            rx = _glob(v)
            parts_fn.append(lambda df, rx=rx: df[col].astype("string").str.match(rx)
                            .fillna(False).to_numpy(dtype=bool))
            parts_ex.append(f'df["{col}"].astype("string").str.match({rx!r}).fillna(False)')

    def fn(df: pd.DataFrame) -> np.ndarray:
        m = np.zeros(len(df), dtype=bool)
        for p in parts_fn:
            m |= p(df)
        return m

    ex = parts_ex[0] if len(parts_ex) == 1 else "(" + " | ".join(parts_ex) + ")"
    if op == "ne":
        return (lambda df: ~fn(df)), f"~{ex}"
    return fn, ex


def _text_term(value: str) -> tuple[Callable, str]:
    if not value.strip():
        raise FilterError('an empty search matches every frame: type a word, or remove the ""')

    # a capture kept on disk is searched in its file's bytes (see .search); the pandas text
    # is what gives the same rows. object dtype, not pandas' "string": a frame that is not
    # valid UTF-8 keeps its bytes as lone surrogates (\udcNN), which Arrow strings refuse
    def fn(df: pd.DataFrame) -> np.ndarray:
        from .search import text_mask

        verify = (df["kind"] == "log").to_numpy(dtype=bool) if "kind" in df else None
        sessions = [str(x) for x in df["session"].dropna().unique()[:10_000]] \
            if "session" in df else []
        return text_mask(df["raw"], value, verify, sessions)

    return fn, f'df["raw"].astype(object).str.contains({value!r}, case=False, regex=False, na=False)'


def _term(field: str | None, op_text: str | None, raw: str,
          violations: pd.DataFrame | None) -> tuple[Callable, str]:
    if field is None:
        return _text_term(_unquote(raw))
    field = field.lower()
    op = _OPS[op_text or ":"]
    value = _unquote(raw)
    if field == "text":
        return _text_term(value)
    if field in _STR_FIELDS:
        return _str_term(field, _STR_FIELDS[field], op, raw)
    if field == "seq" or field == "code":
        col = "seq" if field == "seq" else "error_code"
        if op == "eq" and "," in value:
            try:
                vals = [int(x) for x in value.split(",") if x]
            except ValueError as exc:
                raise FilterError(f"{field} takes whole numbers, not {value!r}") from exc
            return (lambda df: df[col].isin(vals).fillna(False).to_numpy(dtype=bool),
                    f'df["{col}"].isin({vals!r}).fillna(False)')
        try:
            num = int(value)
        except ValueError as exc:
            raise FilterError(f"{field} takes a whole number, not {value!r}") from exc
        return _cmp(col, op, num, repr(num))
    if field == "latency":
        td = parse_duration(value)
        m = _DUR.match(value.strip())
        unit = ((m.group(2) if m else None) or "ms").lower().replace("µs", "us")
        unit = {"m": "min"}.get(unit, unit)
        return _cmp("latency", op, td, f'pd.Timedelta("{m.group(1) if m else td}{unit}")')
    if field == "size":
        nbytes = parse_size(value)
        return _cmp("size", op, nbytes, repr(nbytes))
    if field in ("ts", "time"):
        try:
            ts = pd.Timestamp(value)
        except ValueError as exc:
            raise FilterError(f"cannot read time {value!r}: write ISO 8601, e.g. "
                              "2025-06-01T12:00:00.5Z") from exc
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        return _cmp("ts", op, ts, f'pd.Timestamp("{ts.isoformat()}")')
    if field == "has":
        key = value.lower()
        if key not in _HAS or op not in ("eq", "ne"):
            raise FilterError(f"has: takes one of {', '.join(_HAS)} (e.g. has:violation)")
        ex = _HAS[key]
        col_fn = {"violation": lambda df: df["has_violation"].to_numpy(dtype=bool),
                  "pair": lambda df: (df["pair_seq"] >= 0).to_numpy(dtype=bool),
                  "error": lambda df: (df["kind"] == "error").to_numpy(dtype=bool),
                  "tool_error": lambda df: df["is_tool_error"].to_numpy(dtype=bool)}[key]
        return (col_fn, ex) if op == "eq" else ((lambda df: ~col_fn(df)), f"~{ex}")
    if field == "rule":
        if op not in ("eq", "ne"):
            raise FilterError("rule takes ':' (e.g. rule:response-id-mismatch)")
        v = violations if violations is not None else pd.DataFrame({"rule": [], "seq": []})
        seqs = pd.to_numeric(v.loc[v["rule"].astype("string").str.match(
            _glob(value)).fillna(False), "seq"], errors="coerce").dropna()
        seqs = seqs.astype(np.int64).unique()
        ex = (f'df["seq"].isin(trace.violations.loc[trace.violations["rule"] == {value!r}, '
              '"seq"])') if "*" not in value else (
            f'df["seq"].isin(trace.violations.loc[trace.violations["rule"].str.match('
            f'{_glob(value)!r}), "seq"])')

        def fn(df: pd.DataFrame) -> np.ndarray:
            return df["seq"].isin(seqs).to_numpy(dtype=bool)

        return (fn, ex) if op == "eq" else ((lambda df: ~fn(df)), f"~{ex}")
    raise FilterError(f"unknown field {field!r}: use one of {', '.join(FIELDS)}")


def apply_filter(df: pd.DataFrame, query: str,
                 violations: pd.DataFrame | None = None) -> Filter:
    """Run a filter query over a :func:`~.frametable.frame_table` DataFrame.

    Parameters
    ----------
    df
        The frame table.
    query
        The filter text (empty keeps every row).
    violations
        ``trace.violations``, for ``rule:`` terms.

    Returns
    -------
    Filter
        ``mask`` (one bool per row) and ``expr``: pandas code selecting the same rows,
        written against ``df = frame_table(trace)`` and ``trace``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"method": ["ping", "tools/call"], "raw": ["a", "b"]})
    >>> apply_filter(df, "method:tools/*").expr
    'df[df["method"].astype("string").str.startswith(\\'tools/\\').fillna(False)]'
    """
    mask = np.ones(len(df), dtype=bool)
    exprs = []
    pos = 0
    text = query.strip()
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _TERM.match(text, pos)
        if not m:  # an unmatched quote: search the rest as text
            m = re.compile(r"(-?)()()(\S+)").match(text, pos)
            assert m is not None
        neg, field, op_text, raw = m.group(1), m.group(2) or None, m.group(3) or None, m.group(4)
        pos = m.end()
        fn, ex = _term(field, op_text, raw, violations)
        sub = fn(df)
        if neg:
            sub, ex = ~sub, f"~{ex}" if not ex.startswith("~") else ex[1:]
        mask &= sub
        exprs.append(ex)
    if not exprs:
        return Filter(query, mask, "df")
    return Filter(query, mask, "df[" + " & ".join(exprs) + "]")
