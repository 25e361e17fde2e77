"""A document's record labels made when asked (``_docspans.DocLabels`` on the reader's
side, ``textsources.DocLabelSource`` in the table): the labels the list of them gives,
and the same source column in the table, with rows
of other records among them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mcp_notebook import fast
from mcp_notebook.fast.records import part_of
from mcp_notebook.fast.store import Store
from mcp_notebook.readers._docspans import DocLabels
from mcp_notebook.readers._spans import Spans
from mcp_notebook.readers.base import Record
from mcp_notebook.textsources import DocLabelSource


def _listed(prefix: str, answered: list[bool]) -> list[str]:
    """The reference: entry i's label, then its response's where it has one."""
    out = []
    for i, a in enumerate(answered):
        out.append(f"{prefix}{i}")
        if a:
            out.append(f"{prefix}{i}/response")
    return out


@pytest.mark.parametrize("seed", range(20))
def test_labels_of_pairs_are_the_listed_ones(seed):
    rng = random.Random(seed)
    answered = [rng.random() < 0.6 for _ in range(rng.randint(0, 300))]
    prefix = rng.choice(["cap.json#entry", "c é.json#interaction", ""])
    labels = DocLabels.of_pairs(prefix, np.array(answered, dtype=bool))
    want = _listed(prefix, answered)
    assert labels.tolist() == want and list(labels) == want and len(labels) == len(want)
    assert labels == want and labels == DocLabels.of_pairs(prefix, np.array(answered, bool))
    _assert_indexed_alike(labels, want, rng, 20)


def _assert_indexed_alike(labels, want, rng, times):
    """``labels`` indexed as the list ``want`` is: at random places, slices and arrays of
    places, ``times`` times."""
    for _ in range(times):
        if not want:
            break
        k = rng.randrange(len(want))
        a, b = sorted((rng.randrange(len(want) + 1), rng.randrange(len(want) + 1)))
        idx = np.array([rng.randrange(len(want)) for _ in range(rng.randint(0, 9))],
                       dtype=np.int64)
        assert labels[k] == want[k]
        assert labels[a:b].tolist() == want[a:b]
        assert labels[idx].tolist() == [want[j] for j in idx.tolist()]


@pytest.mark.parametrize("seed", range(10))
def test_label_source_gives_the_labels(seed):
    rng = random.Random(seed)
    answered = [rng.random() < 0.5 for _ in range(rng.randint(1, 200))]
    labels = DocLabels.of_pairs("f#entry", np.array(answered, dtype=bool))
    want = labels.tolist()
    over = {k: f"other{k}" for k in range(len(want)) if rng.random() < 0.2}
    src = DocLabelSource(labels, overrides=over)
    rows = np.array([rng.randrange(len(want)) for _ in range(50)], dtype=np.int64)
    expect = [over.get(r, want[r]) for r in rows.tolist()]
    assert src.texts(rows) == expect
    assert [src.text(r) for r in rows.tolist()] == expect
    assert len(src) == len(want)


def _items(labels: list[str] | DocLabels) -> list[Record | Spans]:
    """A record, a run of spans with ``labels``, a record: the parts of one document."""
    texts = [b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % k if k % 2 == 0 else
             b'{"jsonrpc":"2.0","id":%d,"result":{}}' % (k - 1) for k in range(len(labels))]
    buf = b"".join(texts)
    ends = np.cumsum([len(t) for t in texts]).astype(np.int64)
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    n = len(texts)
    sp = Spans(buf, starts, ends, np.zeros(n, dtype=np.int64), np.full(n, np.nan),
               (np.arange(n) % 2).astype(np.int8), "s", "doc.json", False, None, None,
               streams=("http",), stream=np.zeros(n, dtype=np.int64), labels=labels)
    return [Record(raw="note before", source="doc.json#head", kind="log"), sp,
            Record(raw="note after", source="doc.json#tail", kind="log")]


def test_the_table_keeps_a_large_documents_labels_as_they_are(monkeypatch):
    """With the texts kept as the buffer's bytes (a large document), the labels column
    is made when asked, the other records' labels beside them; the values are those of
    the labels as a list."""
    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    answered = np.array([True, False, True, True, False, True], dtype=bool)
    labels = DocLabels.of_pairs("doc.json#entry", answered)
    lazy = Store.from_parts([part_of(_items(labels))])
    listed = Store.from_parts([part_of(_items(labels.tolist()))])
    want = ["doc.json#head", *labels.tolist(), "doc.json#tail"]
    assert lazy.values("source") == listed.values("source") == want
    assert isinstance(lazy.source.source, DocLabelSource)
    assert lazy.values("raw") == listed.values("raw")


def test_a_small_documents_labels_are_in_memory(monkeypatch):
    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 1 << 62)
    labels = DocLabels.of_pairs("doc.json#entry", np.array([True, False, True], dtype=bool))
    store = Store.from_parts([part_of(_items(labels))])
    assert store.source.dtype == object
    assert store.values("source") == ["doc.json#head", *labels.tolist(), "doc.json#tail"]


def _with_events(rng: random.Random, n: int) -> tuple[DocLabels, list[str]]:
    """Labels of HAR records (a POST, a JSON reply, the events of a stream) and the
    reference list of them."""
    entry, response, event, want = [], [], [], []
    for i in range(n):
        entry.append(i), response.append(False), event.append(-1)
        want.append(f"h.har#entry{i}")
        shape = rng.choice(["post", "reply", "stream"])
        if shape == "reply":
            entry.append(i), response.append(True), event.append(-1)
            want.append(f"h.har#entry{i}/response")
        elif shape == "stream":
            for q in range(rng.randint(0, 12)):
                entry.append(i), response.append(False), event.append(q)
                want.append(f"h.har#entry{i}/event{q}")
    return DocLabels("h.har#entry", np.array(entry, dtype=np.int64),
                     np.array(response, dtype=bool), np.array(event, dtype=np.int64)), want


@pytest.mark.parametrize("seed", range(10))
def test_labels_of_events_are_the_listed_ones(seed):
    rng = random.Random(seed)
    labels, want = _with_events(rng, rng.randint(0, 120))
    assert labels.tolist() == want and labels == want and len(labels) == len(want)
    _assert_indexed_alike(labels, want, rng, 30)
    over = {k: f"other{k}" for k in range(len(want)) if rng.random() < 0.2}
    src = DocLabelSource(labels, overrides=over)
    rows = np.array([rng.randrange(len(want)) for _ in range(50)] if want else [],
                    dtype=np.int64)
    expect = [over.get(r, want[r]) for r in rows.tolist()]
    assert src.texts(rows) == expect and [src.text(r) for r in rows.tolist()] == expect


@pytest.mark.parametrize("lazy", [True, False])
def test_the_table_keeps_event_labels(monkeypatch, lazy):
    """Event labels beside plain ones (two runs of spans, one without events) in the
    table's source column, made when asked or in memory."""
    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0 if lazy else 1 << 62)
    labels, want = _with_events(random.Random(3), 40)
    plain = DocLabels.of_pairs("h.har#entry", np.array([True, False, True], dtype=bool))
    items = _items(labels) + _items(plain)[1:2]
    got = Store.from_parts([part_of(items)])
    assert got.values("source") == ["doc.json#head", *want, "doc.json#tail",
                                    *plain.tolist()]
    assert isinstance(getattr(got.source, "source", None), DocLabelSource) == lazy
