"""Edit a trace as tap records (the frames' exact text), then load the result back.

Every record remembers where it came from (the seq of the original frame, or a tag for a
new one), so findings on the edited trace can be traced back to the original.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..export import to_tap_records

__all__ = ["Work", "what_if"]

Origin = int | str  # a base frame's seq, or the tag of a new frame


class Work:
    """The records of a trace being edited."""

    def __init__(self, trace: Any) -> None:
        records = to_tap_records(trace)
        if len(records) != len(trace):
            raise ValueError("a trace with JSON-RPC batches cannot be edited frame by frame")
        self.rows: list[tuple[Origin, dict[str, Any]]] = list(enumerate(records))
        raw = next((r["raw"] for r in records if str(r.get("raw", "")).startswith("{")), "")
        self.sep = (",", ": ") if '": ' in raw else (",", ":")  # write like the peers did
        name = Path(trace.paths[0]).name if trace.paths else "trace.jsonl"
        self.name = name if name.endswith(".jsonl") else Path(name).stem + ".jsonl"

    def pos(self, origin: Origin) -> int:
        for i, (o, _) in enumerate(self.rows):
            if o == origin:
                return i
        raise KeyError(f"no frame {origin!r} in this trace")

    def record(self, origin: Origin) -> dict[str, Any]:
        return self.rows[self.pos(origin)][1]

    def msg(self, origin: Origin) -> Any:
        return json.loads(self.record(origin)["raw"])

    def dump(self, msg: Any) -> str:
        return msg if isinstance(msg, str) else json.dumps(msg, separators=self.sep,
                                                           ensure_ascii=False)

    def replace(self, origin: Origin, msg: Any) -> None:
        i = self.pos(origin)
        self.rows[i] = (origin, {**self.rows[i][1], "raw": self.dump(msg)})

    def insert(self, after: Origin, tag: str, msg: Any, direction: str | None = None) -> None:
        """Insert a frame after ``after``, in its session (and direction, unless given)."""
        i = self.pos(after)
        template = self.rows[i][1]
        t0 = template.get("ts")
        t1 = self.rows[i + 1][1].get("ts") if i + 1 < len(self.rows) else None
        ts = None if t0 is None else (t0 + 0.0005 if t1 is None else (t0 + t1) / 2)
        rec = {"ts": ts, "dir": direction or template["dir"], "raw": self.dump(msg),
               "session": template.get("session")}
        self.rows.insert(i + 1, (tag, rec))

    def delete(self, origin: Origin) -> None:
        del self.rows[self.pos(origin)]

    def where(self) -> dict[Origin, int]:
        """Origin -> seq in the edited trace."""
        return {o: i for i, (o, _) in enumerate(self.rows)}

    def load(self) -> Any:
        """The edited trace (written to a temporary tap JSONL, loaded, and removed)."""
        from ..load import load

        with tempfile.TemporaryDirectory(prefix="mn-teach-") as folder:
            path = Path(folder) / self.name
            with open(path, "w", encoding="utf-8") as f:
                for _, rec in self.rows:
                    rec = {k: v for k, v in rec.items() if k != "source"}  # nothing marks an edit
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            trace = load(path)
        trace.paths = [self.name]
        return trace


def what_if(trace: Any, *, replace: Mapping[int, Any] | None = None,
            insert_after: Mapping[int, Any] | None = None, delete: Iterable[int] = ()) -> Any:
    """The same trace with some frames changed: "what if the peer had sent this?".

    Parameters
    ----------
    trace
        A loaded trace.
    replace
        ``{seq: message}``: the frame's new message (a dict, or raw text to send as is).
    insert_after
        ``{seq: message}`` or ``{seq: [message, ...]}``: new frames after frame ``seq``,
        in its direction; give ``(direction, message)`` to send from the other side.
    delete
        Seqs of frames to drop.

    Returns
    -------
    Trace
        A new trace; the original is untouched. Seqs after an insert or delete shift.
    """
    from .blind import BlindTrace

    if isinstance(trace, BlindTrace):
        raise TypeError("what_if does not replay an exercise's trace: the replay would show "
                        "the findings the exercise asks for. Answer with ex.check(...) first.")
    w = Work(trace)
    for seq, msg in (replace or {}).items():
        w.replace(int(seq), msg)
    for seq, msgs in (insert_after or {}).items():
        items = msgs if isinstance(msgs, list) else [msgs]
        after: Origin = int(seq)
        for n, item in enumerate(items):
            direction, msg = item if isinstance(item, tuple) else (None, item)
            tag = f"new-{seq}-{n}"
            w.insert(after, tag, msg, direction)
            after = tag
    for seq in delete:
        w.delete(int(seq))
    return w.load()
