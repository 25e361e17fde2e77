"""Between the column form of the checks and the reference lists.

:func:`session_versions_vec` is ``checks.session_versions`` on columns;
:class:`LazyCheckInput` is a reference :class:`~mcp_notebook.core.checks.CheckInput`
whose lists are made from the columns when first read (for a rule that has no column
form); :func:`pair_rows` turns the pair table back into the reference's ``PairRow`` list.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from . import checks as ref_checks
from . import versions as V
from .pairing import Finding, PairRow
from .pairing_vec import OUTCOMES

if TYPE_CHECKING:
    from .checks_vec import VecInput

__all__ = ["session_versions_vec", "LazyCheckInput", "pair_rows"]

REQUEST = 0
KINDS = ("request", "notification", "result", "error", "invalid", "stderr", "log")
_DIR = (None, "c2s", "s2c")


def session_versions_vec(vi: VecInput, version: dict[int, str],
                         override: str | None = None) -> dict[Any, str]:
    """``checks.session_versions`` on columns (``version``: row -> named version)."""
    from .checks_vec import distinct_codes

    present = [vi.session_of(c) for c in distinct_codes(vi.session)]
    if override is not None:
        return {s: V.normalise(override) for s in present}
    init_codes = vi.method_codes(lambda m: m == "initialize")
    init = set(init_codes.tolist())
    from_request: dict[Any, str] = {}
    from_meta: dict[Any, Counter[str]] = {}
    for row in sorted(version):
        if vi.kind[row] != REQUEST:
            continue
        s = vi.session_of(int(vi.session[row]))
        if int(vi.method[row]) in init:
            from_request.setdefault(s, version[row])
        else:
            from_meta.setdefault(s, Counter())[version[row]] += 1
    out: dict[Any, str] = {}
    p = vi.pairs
    for i in np.flatnonzero(vi.method_in(init_codes, p.method) & (p.response_seq >= 0)).tolist():
        s = vi.session_of(int(p.session[i]))
        if s not in out:
            v = version.get(int(p.response_seq[i]))
            if v is not None:
                out[s] = v
    return ref_checks.choose_versions(present, out, from_request, from_meta)


class LazyCheckInput(ref_checks.CheckInput):
    """A :class:`CheckInput` whose lists are made from the columns when first read."""

    def __init__(self, vi: VecInput) -> None:  # noqa: D107 - fields come on demand
        self.__dict__["_vi"] = vi

    def __getattr__(self, name: str) -> Any:
        vi = self.__dict__["_vi"]
        value = _materialise(vi, name)
        self.__dict__[name] = value
        return value


def _materialise(vi: VecInput, name: str) -> Any:
    n = len(vi.kind)
    if name == "kind":
        return [KINDS[k] for k in vi.kind.tolist()]
    if name == "session":
        return [vi.session_of(c) for c in vi.session.tolist()]
    if name == "direction":
        return [_DIR[d + 1] for d in vi.direction.tolist()]
    if name == "method":
        return [vi.name(c) for c in vi.method.tolist()]
    if name == "id_key":
        return vi.id_key.tolist()
    if name == "error_code":
        return [None if v is None or v != v else int(v) for v in vi.error_code.tolist()]
    if name == "flags":
        return [vi.flags.get(i, ()) for i in range(n)]
    if name == "raw":
        return vi.texts(np.arange(n, dtype=np.int64))
    if name == "batch":
        return [None if b < 0 else b for b in vi.batch.tolist()]
    if name == "pairs":
        return pair_rows(vi)
    if name == "findings":
        return [Finding(r, s, q, d) for s, r, q, d in vi.pairs.findings]
    if name == "versions":
        return vi.versions
    if name == "extra":
        return vi.extra
    if name == "reason":
        return [None] * n if vi.reason is None else vi.reason.tolist()
    raise AttributeError(name)


def pair_rows(vi: VecInput) -> list[PairRow]:
    """The pair table as the reference's :class:`PairRow` list (``responses`` included)."""
    p = vi.pairs
    rows: list[PairRow] = []
    by_req: dict[int, PairRow] = {}
    dup = OUTCOMES.index("duplicate")

    def opt(v: int) -> int | None:
        return None if v < 0 else int(v)

    for i in range(len(p)):
        r = PairRow(opt(p.request_seq[i]), opt(p.response_seq[i]), vi.session_of(p.session[i]),
                    _DIR[p.requester[i] + 1], p.id_key[i], vi.name(int(p.method[i])),
                    OUTCOMES[p.outcome[i]], opt(p.cancel_seq[i]), int(p.progress_count[i]))
        if r.response_seq is not None:
            r.responses.append(r.response_seq)
        if p.outcome[i] == dup and r.request_seq in by_req and r.response_seq is not None:
            by_req[r.request_seq].responses.append(r.response_seq)
        elif r.request_seq is not None and p.outcome[i] != dup:
            by_req[r.request_seq] = r
        rows.append(r)
    return rows
