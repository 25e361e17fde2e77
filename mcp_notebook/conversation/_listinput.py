"""The column input of the reference checker: its plain lists as the columns the view
reads, so both checkers give the same findings."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.checks import text_marks
from ..protocol import versions as V
from ._frames import _DUPLICATE

_INT64 = (-(1 << 63), (1 << 63) - 1)
_KINDS = ("request", "notification", "result", "error", "invalid", "stderr", "log")


class ListInput:
    """The column input the view reads, made from the reference checker's plain lists
    (the oracle's ``CheckInput`` (tests)), so both checkers give the same findings."""

    def __init__(self, ci: Any) -> None:
        kind_code = {k: i for i, k in enumerate(_KINDS)}
        self.kind = np.asarray([kind_code.get(k, 4) for k in ci.kind], dtype=np.int8)
        self.session_cats = list(dict.fromkeys(ci.session))
        s_code = {s: i for i, s in enumerate(self.session_cats)}
        self.session = np.asarray([s_code[s] for s in ci.session], dtype=np.int32)
        self.method_cats = sorted({m for m in ci.method if isinstance(m, str)})
        m_code = {m: i for i, m in enumerate(self.method_cats)}
        self.method = np.asarray([m_code.get(m, -1) if isinstance(m, str) else -1
                                  for m in ci.method], dtype=np.int32)
        d_code = {"c2s": 0, "s2c": 1}
        self.direction = np.asarray([d_code.get(d, -1) for d in ci.direction], dtype=np.int8)
        self.batch = np.asarray([-1 if b is None else b for b in ci.batch], dtype=np.int32)
        self.size = np.asarray([len(r.encode("utf-8", "surrogateescape")) if r else 0
                                for r in ci.raw], dtype=np.int64)
        self.id_key = np.asarray(ci.id_key, dtype=object)
        # the codes as given (int or None; a float column would round those above 2**53),
        # but none outside int64, as the frames' Int64 column holds them
        self.error_code = np.empty(len(ci.error_code), dtype=object)
        self.error_code[:] = [None if isinstance(c, int) and not _INT64[0] <= c <= _INT64[1]
                              else c for c in ci.error_code]
        self.extra = ci.extra
        self._raw = ci.raw
        self.versions = ci.versions
        self.pairs = _Pairs(ci.pairs, self.method, m_code)
        self.cache: dict[str, Any] = {}

    def texts(self, rows: np.ndarray) -> list[str | None]:
        return [self._raw[i] for i in np.asarray(rows).tolist()]

    def marks(self, rows: np.ndarray) -> np.ndarray:
        return text_marks(self, rows)

    def version_of(self, code: int) -> str:
        s = self.session_cats[code] if code >= 0 else None
        return self.versions.get(s, V.DEFAULT)


class _Pairs:
    def __init__(self, rows: Any, method: np.ndarray, m_code: dict[str, int]) -> None:
        self.request_seq = np.asarray([-1 if r.request_seq is None else r.request_seq
                                       for r in rows], dtype=np.int64)
        self.response_seq = np.asarray([-1 if r.response_seq is None else r.response_seq
                                        for r in rows], dtype=np.int64)
        self.method = np.asarray([m_code.get(r.method, -1) if isinstance(r.method, str) else -1
                                  for r in rows], dtype=np.int32)
        self.outcome = np.asarray([_DUPLICATE if r.outcome == "duplicate" else 0
                                   for r in rows], dtype=np.int8)
