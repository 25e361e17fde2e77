"""Rules of the method and error-code tables of each version, and of the lifecycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...protocol import versions as V
from ..checks import DIRS, ERROR, NONE, NOTIFICATION, REQUEST, Hits, VecInput, check, hits


def _methods(want: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        if "method_combos" not in vi.cache:
            vi.cache["method_combos"] = _method_combos(vi)
        sel, flat, uniq = vi.cache["method_combos"]
        m1 = len(vi.method_cats) + 1
        # each (session, method, direction) judged by its (version, method, direction):
        # a capture of thousands of sessions names a few versions
        versions, of_session = _session_versions(vi)
        key = (of_session[(uniq // 3) // m1] * m1 + (uniq // 3) % m1) * 3 + uniq % 3
        ukey, inverse = np.unique(key, return_inverse=True)
        verdicts = [_verdict(want, vi, versions[(k // 3) // m1], (k // 3) % m1, k % 3 - 1)
                    for k in ukey.tolist()]
        bad_key = np.fromiter((v is not None for v in verdicts), dtype=bool,
                              count=len(verdicts))
        at = np.flatnonzero(bad_key[inverse.ravel()])
        if not len(at):
            return hits(NONE)
        codes = uniq[at]
        bad = dict(zip(codes.tolist(), [verdicts[i] for i in inverse.ravel()[at].tolist()],
                       strict=True))
        size = (len(vi.session_cats) + 1) * m1 * 3
        if size <= _DENSE:
            table = np.zeros(size, dtype=bool)
            table[codes] = True
            hit = np.flatnonzero(sel & table[flat])
        else:
            hit = np.flatnonzero(sel & np.isin(flat, codes))
        return hits(hit, None, [bad[c] for c in flat[hit].tolist()])
    return check


def _verdict(want: str, vi: VecInput, version: str, m: int, d: int) -> str | None:
    """The detail of a method ``m`` sent in direction ``d`` (-1: none) in ``version`` for
    rule ``want`` (unknown, direction), or None when it is fine."""
    name = vi.method_cats[m]
    entry = V.methods(version).get(name)
    if entry is None:
        # a method the version removed is reported once, as removed-method
        if want == "unknown" and V.removed_in(name, version) is None:
            return f"{name} is not a {version} method"
    elif want == "direction" and d >= 0 and entry[1] != "both" and entry[1] != DIRS[d + 1]:
        side = "client" if entry[1] == "c2s" else "server"
        return f"{name} is sent by the {side} in {version}"
    return None


def _session_versions(vi: VecInput) -> tuple[list[str], np.ndarray]:
    """The distinct versions sessions are checked against, and the code of each session's
    (by session code + 1: code -1 first)."""
    got = vi.cache.get("session_versions")
    if got is None:
        versions: dict[str, int] = {}
        codes = np.asarray([versions.setdefault(vi.version_of(s), len(versions))
                            for s in range(-1, len(vi.session_cats))], dtype=np.int64)
        got = vi.cache["session_versions"] = (list(versions), codes)
    return got  # type: ignore[no-any-return]


_DENSE = 1 << 22  # combinations of (session, method, direction) held in a table


def _method_combos(vi: VecInput) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which frames the method rules look at (a mask), each frame's (session, method,
    direction) as one number, and the distinct numbers of the frames looked at."""
    notif = vi.method_codes(lambda m: m.startswith("notifications/"))
    sel = (((vi.kind == REQUEST) & ~vi.method_in(notif)) | (vi.kind == NOTIFICATION)) \
        & (vi.method >= 0)
    m1 = len(vi.method_cats) + 1
    size = (len(vi.session_cats) + 1) * m1 * 3
    flat: Any = vi.session.astype(np.int32 if size < 1 << 31 else np.int64)
    flat += 1
    flat *= m1
    flat += vi.method
    flat *= 3
    flat += vi.direction
    flat += 1
    if size <= _DENSE:  # few combinations: a table of those seen
        present = np.zeros(size, dtype=bool)
        present[flat[sel]] = True
        return sel, flat, np.flatnonzero(present)
    return sel, flat, np.unique(flat[sel])


def _lifecycle(vi: VecInput) -> Hits:
    init = vi.method_codes(lambda m: m == "initialize")
    inits = np.flatnonzero((vi.kind == REQUEST) & vi.method_in(init))
    if not len(inits):
        return hits(NONE)
    sess, first = np.unique(vi.session[inits], return_index=True)
    first_init = np.full(len(vi.session_cats) + 1, -1, dtype=np.int64)
    first_init[sess] = inits[first]  # session code -1 lands in the last slot
    # only requests before some session's first initialize can come too early
    head = int(first_init.max())
    req = np.flatnonzero(vi.kind[:head] == REQUEST)
    meth = vi.method[req]
    fi = first_init[vi.session[req]]
    ok_methods = vi.method_codes(lambda m: m in ("ping", "initialize"))
    sel = (fi >= 0) & (req < fi) & (vi.direction[req] == 0) & ~vi.method_in(ok_methods, meth)
    rows, fi = req[sel], fi[sel]
    return hits(rows, fi, [f"{vi.name(int(vi.method[r]))} before initialize"
                            for r in rows.tolist()])


def _error_codes(reserved_2026: bool) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        codes = vi.error_code
        rows = np.flatnonzero((vi.kind == ERROR) & ~np.asarray(codes.isna()))
        vals = np.asarray(codes[rows], dtype=np.int64) if len(rows) else NONE
        inr = (vals >= -32768) & (vals <= -32000)
        rows, vals = rows[inr], vals[inr]
        out, det = [], []
        cache: dict[tuple[int, int], str | None] = {}
        for r, code in zip(rows.tolist(), vals.tolist(), strict=True):
            s = int(vi.session[r])
            got = cache.get((s, code), "")
            if got == "":
                got = cache[(s, code)] = _error_verdict(vi.version_of(s), code, reserved_2026)
            if got is not None:
                out.append(r)
                det.append(got)
        return hits(out, None, det)
    return check


def _error_verdict(version: str, code: int, reserved_2026: bool) -> str | None:
    if code in V.error_codes(version):
        return None
    in_2026_range = V.normalise(version) == V.LATEST and -32099 <= code <= -32020
    if reserved_2026 and in_2026_range:
        return f"code {code} is not defined by {version}"
    if not reserved_2026 and not in_2026_range and code not in V.SDK_CODES:
        return f"code {code} is reserved but not defined by {version}"
    return None

check("unknown-method")(_methods("unknown"))
check("wrong-direction")(_methods("direction"))
check("lifecycle-order")(_lifecycle)
check("unknown-error-code")(_error_codes(False))
check("reserved-error-code-2026")(_error_codes(True))
