"""Infer who sent each message when a capture does not say (bare stdio NDJSON).

Sans-IO. Requests and notifications take the direction the method table gives them;
methods that both sides send (``ping``) and unknown ones are taken as client requests,
unless the client already used that id in the session (both sides count their own ids,
so a reused id points to the other side). A response travels opposite to the request
it answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from .versions import direction_of

__all__ = ["infer"]


def infer(
    kind: Sequence[str],
    session: Sequence[object],
    id_key: Sequence[str | None],
    method: Sequence[str | None],
    given: Sequence[str | None],
    batch: Sequence[int | None] | None = None,
) -> list[str | None]:
    """Fill the ``None`` entries of ``given`` with ``c2s``/``s2c`` where a message is.

    With ``batch`` (each frame's position in its batch array), the members of one batch
    take the direction inferred for its first member: one side wrote the whole line.
    """
    out = list(given)
    used: set[tuple[object, str, str | None]] = set()
    pending: dict[tuple[object, str | None], list[str]] = {}
    for i, k in enumerate(kind):
        if k in ("request", "notification"):
            d = out[i]
            if d is None:
                m = method[i] or ""
                known = direction_of(m)
                if known in ("c2s", "s2c"):
                    d = known
                elif k == "request" and (session[i], "c2s", id_key[i]) in used:
                    d = "s2c"
                else:
                    d = "c2s"
                out[i] = d
            if k == "request":
                used.add((session[i], d, id_key[i]))
                pending.setdefault((session[i], id_key[i]), []).append(d)
        elif k in ("result", "error") and out[i] is None:
            stack = pending.get((session[i], id_key[i]))
            if stack:
                out[i] = "s2c" if stack.pop() == "c2s" else "c2s"
            else:
                out[i] = "s2c"  # most responses come from the server
    if batch is not None:
        first: str | None = None
        for i, pos in enumerate(batch):
            if pos == 0:
                first = out[i]
            elif pos is not None and first is not None:
                out[i] = first
    return out
