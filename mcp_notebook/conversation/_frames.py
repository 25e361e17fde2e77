"""What the conversation rules read of one frame: its message decoded (cached per frame),
its raw text, and its envelope columns (method, direction, session, negotiated version,
error code) without decoding. The base of :class:`~._view.View`; nothing here opens a
file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..protocol import versions as V
from ..protocol.envelope import bounded_recursion
from ..protocol.vocab import OUTCOMES

REQUEST, NOTIFICATION, RESULT, ERROR = 0, 1, 2, 3
_DIR = {0: "c2s", 1: "s2c"}
_DUPLICATE = OUTCOMES.index("duplicate")
_decode = msgspec.json.decode


def _body(text: str | bytes) -> Any:
    """The decoded message of a frame's text (None when it does not decode). A str is
    decoded as it is (msgspec reads its UTF-8 itself), one holding undecodable bytes
    (surrogate escapes, which have no UTF-8) through its bytes."""
    try:
        try:
            return _decode(text)
        except UnicodeEncodeError:
            assert isinstance(text, str)
            return _decode(text.encode("utf-8", "surrogateescape"))
    except (msgspec.DecodeError, RecursionError):
        return None


class Frames:
    """The frames of a check input (``engine.checks.VecInput``), one at a time."""

    def __init__(self, vi: Any) -> None:
        self.vi = vi
        self._bodies: dict[int, Any] = {}
        self._versions: dict[int, str] = {}  # session code -> its version, normalised

    # -- one frame ---------------------------------------------------------------------------
    def body(self, seq: int) -> Any:
        """The decoded message of frame ``seq`` (None when it does not decode)."""
        if seq in self._bodies:
            return self._bodies[seq]
        self.prefetch([seq])
        return self._bodies[seq]

    def prefetch(self, seqs: Sequence[int]) -> None:
        todo = [s for s in seqs if s not in self._bodies]
        if not todo:
            return
        texts = self.vi.texts(np.asarray(todo, dtype=np.int64))
        batches = self.vi.batch[np.asarray(todo, dtype=np.int64)].tolist()
        with bounded_recursion():
            for seq, text, batch in zip(todo, texts, batches, strict=True):
                value: Any = None
                if text is not None:
                    value = _body(text)
                if batch >= 0 and isinstance(value, list):
                    value = value[batch] if batch < len(value) else None
                self._bodies[seq] = value

    def texts(self, seqs: Sequence[int]) -> list[Any]:
        """The raw texts of frames ``seqs`` (not kept: the typed readers below keep what
        they decode)."""
        return self.vi.texts(np.asarray(seqs, dtype=np.int64)) if len(seqs) else []

    def containing(self, seqs: Sequence[int], needles: Sequence[str]) -> list[int]:
        """The frames of ``seqs`` whose raw text holds one of ``needles`` (a prefilter: a
        member a condition reads cannot be there when its name is not in the text, unless
        written with escapes: a text with a ``\\u`` escape is kept)."""
        return [s for s, text in zip(seqs, self.texts(seqs), strict=True)
                if text is not None and (any(n in text for n in needles) or "\\u" in text)]

    def params(self, seq: int) -> dict[str, Any]:
        msg = self.body(seq)
        p = msg.get("params") if isinstance(msg, dict) else None
        return p if isinstance(p, dict) else {}

    def result(self, seq: int) -> dict[str, Any] | None:
        msg = self.body(seq)
        r = msg.get("result") if isinstance(msg, dict) else None
        return r if isinstance(r, dict) else None

    def error(self, seq: int) -> dict[str, Any] | None:
        msg = self.body(seq)
        e = msg.get("error") if isinstance(msg, dict) else None
        return e if isinstance(e, dict) else None

    def error_code(self, seq: int) -> int | None:
        """error.code of an error frame, from the envelope column (no decoding)."""
        code = self.vi.error_code[seq]
        return None if code is None or code is pd.NA or code != code else int(code)

    def method(self, seq: int) -> str | None:
        code = int(self.vi.method[seq])
        return None if code < 0 else self.vi.method_cats[code]

    def direction(self, seq: int) -> str | None:
        return _DIR.get(int(self.vi.direction[seq]))

    def session(self, seq: int) -> int:
        return int(self.vi.session[seq])

    def version(self, seq: int) -> str:
        session = int(self.vi.session[seq])
        found = self._versions.get(session)
        if found is None:
            found = self._versions[session] = V.normalise(self.vi.version_of(session))
        return found

    def extra(self, seq: int) -> dict[str, Any]:
        return self.vi.extra.get(seq, {})
