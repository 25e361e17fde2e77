"""Direction inference on the column store: :func:`mcp_notebook.engine.walks.infer`, in C.

Sans-IO. Where the C extension is built the walk runs there (``csrc/pair.h``); without
it, or for a session that keeps more than 64 requests of one id unanswered (the C walk's
stack), the Python walk of :func:`~mcp_notebook.engine.walks.infer` runs on the codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..protocol.versions import direction_of
from ..protocol.vocab import DIRECTIONS, KINDS
from . import native as _native
from .fallback import fell_back
from .walks import infer

__all__ = ["infer_codes"]

_DIRS = (None, *DIRECTIONS)


def _method_dirs(cats: Sequence[Any]) -> np.ndarray:
    """Per method code (+1 slot for none): 0 c2s, 1 s2c, -1 both/unknown."""
    out = np.full(len(cats) + 1, -1, dtype=np.int8)
    for i, m in enumerate(cats):
        d = direction_of(m or "")
        out[i] = 0 if d == "c2s" else 1 if d == "s2c" else -1
    return out


def infer_codes(kind: np.ndarray, session: np.ndarray, id_code: np.ndarray, method: np.ndarray,
                method_cats: Sequence[Any], given: np.ndarray) -> np.ndarray:
    """Direction codes (0 c2s, 1 s2c, -1 none) with the unknown ones of messages filled in.

    ``id_code`` numbers the distinct id keys (-1: no id).
    """
    native = _native.native
    if native is not None and (not len(session) or int(session.max()) < (1 << 29) - 1):
        c = np.ascontiguousarray
        got = native.directions(c(kind, np.int8), c(session, np.int32), c(id_code, np.int32),
                                c(method, np.int32), _method_dirs(method_cats),
                                c(given, np.int8))
        if got is not None:
            return np.frombuffer(got, dtype=np.int8)
    elif native is None and (why := _native.missing()) is not None:
        fell_back(why)
    names = [*method_cats, None]
    out = infer([KINDS[k] for k in kind.tolist()], session.tolist(), id_code.tolist(),
                [names[m] for m in method.tolist()], [_DIRS[d + 1] for d in given.tolist()])
    return np.fromiter((_DIRS.index(d) - 1 for d in out), dtype=np.int8, count=len(out))
