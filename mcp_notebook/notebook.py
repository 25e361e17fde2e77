"""Notebooks written for you: an analysis of one capture, and exercise sheets for learners.

:func:`analysis` builds the notebook ``mcp-notebook open CAPTURE`` writes: the capture
loaded, its summary and explorer, then one section per question of a debugging checklist
for a captured exchange (is it JSON-RPC 2.0, does every response answer a request, protocol
error or failed tool, methods and capabilities, findings with their spec sentences,
latency, redaction before sharing). :func:`worksheet` builds a learner's sheet of planted
faults (``mn.teach.worksheets`` writes one per learner). :func:`write` validates a
notebook with :func:`nbformat.validate` before it writes it.

>>> import mcp_notebook as mn
>>> from mcp_notebook.notebook import analysis
>>> nb = analysis(mn.sample_path("demo-stdio"))
>>> nb.cells[0].source.splitlines()[0]
'# `demo-stdio.jsonl`: what happened, and what is wrong'
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from .teach._seed import learner_seed

__all__ = ["analysis", "learner_seed", "resolve_capture", "worksheet", "write"]

_KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
           "language_info": {"name": "python"}}


def _notebook(name: str, cells: Iterable[tuple[str, str]]) -> Any:
    nb = new_notebook(metadata=dict(_KERNEL))
    for n, (kind, body) in enumerate(cells):
        cell = new_markdown_cell(body.strip("\n")) if kind == "md" else new_code_cell(
            body.strip("\n"))
        cell.id = hashlib.sha1(f"{name}:{n}".encode()).hexdigest()[:8]  # stable: a rewrite
        nb.cells.append(cell)                                            # diffs cleanly
    return nb


def write(nb: Any, path: str | Path) -> Path:
    """Validate ``nb`` (:func:`nbformat.validate`) and write it to ``path``."""
    nbformat.validate(nb)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return path


def resolve_capture(capture: str | Path) -> tuple[Path, str | None]:
    """``(path, bundled name or None)``: a file or folder that exists, else a bundled trace.

    Raises
    ------
    FileNotFoundError
        Neither; the message lists the bundled names.
    """
    path = Path(capture)
    if path.exists():
        return path, None
    from .bundled import sample_path

    try:
        found = sample_path(str(capture))
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"no such file {str(capture)!r}, and {exc}") from None
    return found, found.stem


def _load_code(path: Path, bundled: str | None, notebook: Path | None) -> str:
    if bundled is not None:
        return f"t = mn.load(mn.sample_path({bundled!r}))"
    target = path.resolve()
    shown = str(target)
    if notebook is not None:  # next to (or below) the notebook: a path that moves with both
        try:
            shown = os.path.relpath(target, notebook.resolve().parent)
        except ValueError:  # another drive (Windows)
            pass
        if shown.startswith(".."):
            shown = str(target)
    return f"t = mn.load({shown!r})"


def analysis(capture: str | Path, *, notebook: str | Path | None = None) -> Any:
    """The analysis notebook of one capture (a path, or the name of a bundled trace).

    Parameters
    ----------
    capture
        The capture file or folder, or a bundled trace name (``mn.datasets()``).
    notebook
        Where the notebook will be written: a capture in that folder (or below it) is
        loaded by a relative path, so the two can move together.
    """
    path, bundled = resolve_capture(capture)
    load = _load_code(path, bundled, Path(notebook) if notebook else None)
    name = path.name
    return _notebook(f"open:{name}", [
        ("md", f"""
# `{name}`: what happened, and what is wrong

Written by `mcp-notebook open` for the capture `{name}`. Run every cell (*Run ▸ Run All
Cells*), then read from the top: after the summary and the explorer, each section answers one
question of a debugging checklist for a captured MCP exchange. `t.frames`, `t.pairs` and
`t.violations` are ordinary pandas DataFrames: filter them further in cells of your own.
"""),
        ("code", f"""
import pandas as pd

import mcp_notebook as mn

pd.set_option("display.max_colwidth", 200)
{load}
t
"""),
        ("md", """
## Summary

Counts of every kind of row, of the requests' outcomes and of the findings.
"""),
        ("code", "t.summary()"),
        ("md", """
## The explorer

Every frame in order, one lane per direction; click a frame to see its JSON, its partner
and the findings on it.
"""),
        ("code", "mn.explore(t)"),
        ("md", """
## 1. Is every frame a JSON-RPC 2.0 message?

A message is a JSON object with `"jsonrpc": "2.0"` and either a `method` (a request, or a
notification when it has no `id`) or an `id` with a `result` or an `error`. Lines that are
not messages are `invalid` rows with their reason; the envelope rules list the rest.
"""),
        ("code", """
envelope = set(mn.rules().query("topic == 'envelope'")["code"])
display(t.frames.loc[t.frames["kind"] == "invalid", ["seq", "source", "reason", "raw"]])
t.violations[t.violations["rule"].isin(envelope)]
"""),
        ("md", """
## 2. Does every response answer a request?

Responses are matched to requests by `id`, per session and per sender; `1` and `"1"` are
different ids (`id_key` keeps them apart). `outcome` tells what became of each request:
`unanswered` and `cancelled` requests got no response, an `orphan` answers no request, a
`duplicate` answers one a second time.
"""),
        ("code", """
display(t.pairs["outcome"].value_counts())
t.pairs[t.pairs["outcome"].isin(["unanswered", "cancelled", "orphan", "duplicate"])]
"""),
        ("md", """
## 3. A protocol error, or a tool that failed?

An `error` response says the request itself could not be handled (an unknown method, bad
parameters: a JSON-RPC error code). A tool that ran and failed answers with an ordinary
result whose `isError` is true: the outcome `tool_error`. A client treats the two
differently, so keep them apart when you count failures.
"""),
        ("code", """
failed = t.pairs[t.pairs["outcome"].isin(["error", "tool_error"])]
failed.merge(t.frames[["seq", "error_message"]], left_on="response_seq", right_on="seq",
             how="left")[["request_seq", "response_seq", "method", "outcome", "error_code",
                          "error_message"]]
"""),
        ("md", """
## 4. Method names, argument shapes, negotiated capabilities

Which methods each side sent, what `initialize` negotiated, and the arguments of each tool
call; the lifecycle rules flag methods unknown to the negotiated version or sent by the
wrong side.
"""),
        ("code", """
t.frames.dropna(subset=["method"]).groupby(["direction", "method"], observed=True).size()
"""),
        ("code", """
def part(message, key):
    value = message.get(key) if isinstance(message, dict) else None
    return value if isinstance(value, dict) else {}


rows = []
for p in t.pairs[t.pairs["method"] == "initialize"].itertuples():
    asked = part(t.message(int(p.request_seq)), "params") if pd.notna(p.request_seq) else {}
    got = part(t.message(int(p.response_seq)), "result") if pd.notna(p.response_seq) else {}
    rows.append({"session": p.session, "asked version": asked.get("protocolVersion"),
                 "agreed version": got.get("protocolVersion"),
                 "client capabilities": sorted(part(asked, "capabilities")),
                 "server capabilities": sorted(part(got, "capabilities"))})
pd.DataFrame(rows)
"""),
        ("code", """
calls = t.frames[(t.frames["method"] == "tools/call") & (t.frames["kind"] == "request")]
pd.DataFrame([{"seq": seq, "tool": part(t.message(int(seq)), "params").get("name"),
               "arguments": sorted(part(part(t.message(int(seq)), "params"), "arguments"))}
              for seq in calls["seq"]], columns=["seq", "tool", "arguments"])
"""),
        ("code", """
lifecycle = set(mn.rules().query("topic == 'lifecycle'")["code"])
t.violations[t.violations["rule"].isin(lifecycle)]
"""),
        ("md", """
## Every finding, with the sentence of the specification it breaks

`message` says what is wrong and what to do; `spec` quotes the specification (or JSON-RPC
2.0) and says where. `mn.rules()` is the whole catalogue.
"""),
        ("code", 't.violations[["seq", "related_seq", "severity", "rule", "message", "spec"]]'),
        ("md", """
## Latency by method

Time from request to response, per method (answered requests only), with error rates.
"""),
        ("code", "t.latency_by_method()"),
        ("md", """
## 5. Redact before you share

Captures carry tokens, keys and whatever users typed. `t.redact()` replaces every secret it
finds with a salted hash (equal secrets stay equal, ids and sessions are kept) and reports
what it replaced where; in a terminal, `mcp-notebook redact CAPTURE -o shared.jsonl` writes
the redacted copy to share.
"""),
        ("code", """
clean, report = t.redact()
report
"""),
    ])


# -- exercise sheets -----------------------------------------------------------------------------

def worksheet(learner: str, exercises: Sequence[str] | None = None) -> Any:
    """A learner's exercise sheet: each fault planted with the learner's own seed.

    Two learners get different traces or places for the same fault, so answers cannot be
    copied; the sheet is the same each time it is written for the same name.
    """
    from .teach.faults import FAULTS

    names = list(exercises) if exercises is not None else list(FAULTS)
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise KeyError(f"no exercise {unknown[0]!r} (see mn.teach.exercises())")
    base = learner_seed(learner)
    cells: list[tuple[str, str]] = [
        ("md", f"""
# MCP exercises for {learner}

Each exercise plants one fault in a real captured MCP session. Find the frames that break a
rule, answer with `{{seq: "rule-code"}}`, and run the check: the feedback says what is right,
what is wrong and quotes the rule. `exN.hint()` helps when you are stuck; `mn.rules()` lists
the rule codes; `mn.explore(exN.trace)` shows the trace.
"""),
        ("code", """
import pandas as pd

import mcp_notebook as mn

mn.rules()[["code", "severity", "title"]]
"""),
    ]
    for k, name in enumerate(names, 1):
        fault = FAULTS[name]
        cells += [
            ("md", f"## Exercise {k}: {name}\n\n{fault.question}"),
            ("code", f'ex{k} = mn.teach.exercise({name!r}, seed={(base + k) % 2**31})\n'
                     f'ex{k}.trace.frames[["seq", "direction", "kind", "id_key", "method", '
                     '"raw"]]'),
            ("code", f"answer{k} = {{}}  # {{seq: \"rule-code\"}}\nex{k}.check(answer{k})"),
            ("code", f"# ex{k}.hint()"),
        ]
    return _notebook(f"sheet:{learner}", cells)
