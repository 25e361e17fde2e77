"""The lazy text column: read by offset, and still a text column to pandas."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mcp_notebook.lazytext import (
    FileSource,
    LabelSource,
    LazyTextArray,
    ListSource,
    MultiSource,
    StaleCaptureError,
    texts_of,
)

LINES = [b'{"a":1}', b"caf\xc3\xa9 \xf0\x9f\x9a\x80", b"", b"bad \xff byte", b"last"]


@pytest.fixture
def column(tmp_path: Path) -> pd.Series:
    path = tmp_path / "t.ndjson"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    offsets = np.cumsum([0] + [len(x) + 1 for x in LINES[:-1]])
    lengths = np.array([len(x) for x in LINES], dtype=np.int32)
    return pd.Series(LazyTextArray(FileSource(path, offsets, lengths)), name="raw")


TEXT = [x.decode("utf-8", "surrogateescape") for x in LINES]


def test_reads_each_line_exactly(column: pd.Series) -> None:
    assert str(column.dtype) == "lazytext"
    assert column.tolist() == TEXT
    assert column[1] == "café 🚀" and column.iloc[-1] == "last"
    assert column[3].encode("utf-8", "surrogateescape") == LINES[3]
    assert list(column) == TEXT
    assert column.to_numpy(dtype=object).tolist() == TEXT


def test_selects_compares_and_searches(column: pd.Series) -> None:
    assert (column == "last").tolist() == [False, False, False, False, True]
    assert (column != "").tolist() == [True, True, False, True, True]
    assert column.isin(["last", "x"]).tolist() == [False] * 4 + [True]
    assert column[column.str.startswith("{")].tolist() == ['{"a":1}']
    assert column.str.len().tolist() == [len(t) for t in TEXT]
    assert column.str.contains("é", regex=False).tolist() == [False, True, False, False, False]
    assert column.iloc[[4, 0]].tolist() == ["last", '{"a":1}']
    assert column.iloc[1:3].tolist() == TEXT[1:3]


def test_frames_operations_keep_it_a_text_column(column: pd.Series) -> None:
    df = pd.DataFrame({"n": range(len(LINES)), "raw": column})
    assert df[df["n"] > 2]["raw"].tolist() == TEXT[3:]
    assert df.sort_values("n", ascending=False)["raw"].tolist() == TEXT[::-1]
    assert df.reindex([0, 9])["raw"].tolist() == ['{"a":1}', None]
    assert pd.concat([df, df])["raw"].tolist() == TEXT + TEXT
    assert "café" in df.to_string() and "café" in df._repr_html_()
    assert df.merge(pd.DataFrame({"n": [4]}), on="n")["raw"].tolist() == ["last"]
    assert column.astype(object).tolist() == TEXT
    assert column.memory_usage(index=False) == 0  # the text is not held


def test_pickles_and_sees_the_file_change(column: pd.Series, tmp_path: Path) -> None:
    back = pickle.loads(pickle.dumps(column))
    assert back.tolist() == TEXT
    (tmp_path / "t.ndjson").write_bytes(b"other")
    with pytest.raises(StaleCaptureError, match="changed on disk"):
        column[0]


def test_sources_by_label_list_and_parts() -> None:
    labels = LabelSource("f.ndjson", np.array([1, 2, 5]), {1: "elsewhere:9"})
    assert pd.Series(LazyTextArray(labels)).tolist() == ["f.ndjson:1", "elsewhere:9",
                                                         "f.ndjson:5"]
    both = MultiSource([ListSource(["a", "b"]), labels])
    arr = LazyTextArray(both)
    assert arr.tolist() == ["a", "b", "f.ndjson:1", "elsewhere:9", "f.ndjson:5"]
    assert texts_of(arr, [4, 0]) == ["f.ndjson:5", "a"]
    assert texts_of(np.array(["x", "y"], dtype=object), [1]) == ["y"]
    joined = LazyTextArray._concat_same_type([arr[:1], LazyTextArray(ListSource(["z"]))])
    assert joined.tolist() == ["a", "z"]
