"""A capture may name a session or a method with hundreds of thousands of characters:
the timeline sends bounded labels, so the browser never trims a 300,000-character string."""

import json

import mcp_notebook as mn
from mcp_notebook.widgets.aggregate import LABEL_MAX, prepare
from mcp_notebook.widgets.viewport import view

LONG = 300_000


def long_label_capture(path):
    """Two sessions (so lanes carry session names) whose names are 300,000 characters, and
    a method name as long."""
    method = "tools/" + "x" * LONG
    lines = []
    for k, session in enumerate(("a" * LONG, "b" * LONG)):
        t = 1750000000.0 + k
        for i, (d, msg) in enumerate([
                ("c2s", {"jsonrpc": "2.0", "id": 1, "method": method}),
                ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {}}),
                ("c2s", {"jsonrpc": "2.0", "method": method})]):
            lines.append(json.dumps({"ts": t + i / 10, "dir": d, "session": session,
                                     "raw": json.dumps(msg)}))
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def test_lane_and_method_labels_are_bounded(tmp_path):
    t = mn.load(long_label_capture(tmp_path / "long.jsonl"), format="tap")
    assert t.frames["session"].str.len().max() == LONG  # the table keeps the full name
    for lane_by in ("direction", "method"):
        payload = view(prepare(t, lane_by=lane_by))
        labels = payload["lanes"] + payload.get("methods", [])
        assert labels and max(map(len, labels)) <= LABEL_MAX
        assert any("(300,006 ch)" in label for label in labels)  # the method, cut
        if lane_by == "direction":
            assert any("(300,000 ch) · client → server" in lane for lane in payload["lanes"])
