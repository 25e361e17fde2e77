"""The three tables out (``Trace.to_parquet`` / ``to_arrow``, ``convert --table``), read back
by pandas, polars and DuckDB with every id exact: ``1`` and ``"1"`` apart, ids past 2^64
whole, the JSON type beside the JSON text."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcp_notebook as mn
from helpers import INIT, err, load_rows, note, ok, req
from mcp_notebook.cli import main
from mcp_notebook.export import TABLES, id_type

pl = pytest.importorskip("polars")  # the bench extra
duckdb = pytest.importorskip("duckdb")

BIG = 2**64 + 1
MIXED = [*INIT,
         ("c2s", req(1, "ping")), ("c2s", req("1", "ping")),         # in flight together
         ("c2s", req(BIG, "ping")), ("c2s", req(-(2**63) - 1, "ping")),
         ("s2c", ok("1")), ("s2c", ok(1)), ("s2c", ok(BIG)), ("s2c", ok(-(2**63) - 1)),
         ("c2s", req(2**53 + 1, "tools/list")), ("s2c", ok(str(2**53 + 1))),  # type flipped
         ("s2c", err(None, -32700, "Parse error")), ("c2s", req(1.5, "ping")),
         ("c2s", note("notifications/cancelled", {"requestId": 1.5}))]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    return load_rows(tmp_path_factory.mktemp("mixed"), MIXED)


def _exact(table: pd.DataFrame) -> list:
    """(id as Python object, its type name) from the id columns of a table read back."""
    return [None if k is None or k != k else (json.loads(k), t)
            for k, t in zip(table["id_key"], table["id_type"], strict=True)]


def _expected(df: pd.DataFrame) -> list:
    names = {int: "integer", str: "string", float: "number", type(None): "null"}
    return [None if k is None or k != k else (i, names[type(i)])
            for i, k in zip(df["id"], df["id_key"], strict=True)]


def _read(reader: str, path) -> pd.DataFrame:
    if reader == "pandas":
        return pd.read_parquet(path)
    if reader == "polars":
        return pl.read_parquet(path).to_pandas()
    return duckdb.sql(f"SELECT * FROM '{path}'").df()


def test_to_arrow_has_three_tables_with_id_text_and_type(mixed):
    tables = mixed.to_arrow()
    assert list(tables) == list(TABLES)
    for name in ("frames", "pairs"):
        cols = tables[name].column_names
        assert "id" not in cols and cols.index("id_type") == cols.index("id_key") + 1
        assert str(tables[name].schema.field("id_key").type) == "string"
    assert tables["violations"].num_rows == len(mixed.violations) > 0
    assert tables["pairs"].num_rows == len(mixed.pairs)


@pytest.mark.parametrize("reader", ["pandas", "polars", "duckdb"])
def test_parquet_round_trip_keeps_every_id_exact(mixed, tmp_path, reader):
    paths = mixed.to_parquet(tmp_path / "out")
    assert {p.name for p in paths.values()} == {f"{n}.parquet" for n in TABLES}
    frames, pairs, violations = (_read(reader, paths[n]) for n in TABLES)
    got, want = _exact(frames), _expected(mixed.frames)
    assert got == want
    assert [type(g[0]) for g in got if g] == [type(w[0]) for w in want if w]  # 1 is not "1"
    assert (BIG, "integer") in got and ("1", "string") in got and (1, "integer") in got
    assert _exact(pairs) == _expected(mixed.pairs)
    assert frames["raw"].tolist() == mixed.frames["raw"].tolist()
    assert frames["seq"].tolist() == mixed.frames["seq"].tolist()
    assert [str(k) for k in frames["kind"]] == [str(k) for k in mixed.frames["kind"]]
    assert list(violations["rule"]) == list(mixed.violations["rule"])
    assert violations["seq"].tolist() == mixed.violations["seq"].tolist()
    assert list(violations["spec"]) == list(mixed.violations["spec"])


def test_duckdb_joins_pairs_to_frames_on_the_exact_id(mixed, tmp_path):
    mixed.to_parquet(tmp_path)
    rows = duckdb.sql(f"""
        SELECT p.id_key, p.id_type, f.raw FROM '{tmp_path}/pairs.parquet' p
        JOIN '{tmp_path}/frames.parquet' f ON f.seq = p.response_seq
        WHERE p.id_key IN ('1', '"1"', '{BIG}') ORDER BY p.request_seq""").fetchall()
    assert [(k, t) for k, t, _ in rows] == [("1", "integer"), ('"1"', "string"),
                                            (str(BIG), "integer")]
    assert all(json.loads(raw)["id"] == json.loads(k) for k, _, raw in rows)


def test_polars_keeps_text_columns_as_strings_even_when_empty(tmp_path):
    t = mn.load(mn.sample_path("demo-stdio"))
    t.to_parquet(tmp_path)
    schema = pl.read_parquet(tmp_path / "frames.parquet").schema
    assert schema["reason"] == pl.String and schema["id_type"] == pl.String
    lat = pl.read_parquet(tmp_path / "pairs.parquet")["latency"]
    assert lat.dtype == pl.Duration("ns")
    assert lat.drop_nulls().cast(pl.Int64).to_list() == \
        t.pairs["latency"].dropna().astype("int64").tolist()  # to the nanosecond


@pytest.mark.parametrize("key,kind", [('"a"', "string"), ("1", "integer"), ("-3", "integer"),
                                      (str(2**70), "integer"), ("1.0", "number"),
                                      ("1e3", "number"), ("null", "null"), (None, None),
                                      ("true", "boolean"), ("{}", "object"), ("[]", "array")])
def test_id_type(key, kind):
    assert id_type(key) == kind


ids = st.one_of(st.integers(min_value=-(2**80), max_value=2**80), st.text(max_size=8),
                st.sampled_from([0, 2**63, 2**64, -(2**63) - 1, "0", "", "\u00e9"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ids, min_size=1, max_size=6, unique_by=lambda i: (type(i), i)))
def test_any_ids_survive_parquet(tmp_path_factory, id_list):
    folder = tmp_path_factory.mktemp("ids")
    rows = [*INIT, *[("c2s", req(i, "ping")) for i in id_list],
            *[("s2c", ok(i)) for i in reversed(id_list)]]
    t = load_rows(folder, rows)
    t.to_parquet(folder / "out")
    back = pl.read_parquet(folder / "out" / "pairs.parquet").to_pandas()
    assert _exact(back) == _expected(t.pairs)
    assert (back["outcome"].astype(str) == "result").all()


# -- the command line ------------------------------------------------------------------------

@pytest.mark.parametrize("table", TABLES)
def test_convert_table(mixed, tmp_path, table, capsys):
    src = tmp_path / "mixed.jsonl"
    src.write_text("".join(json.dumps({"ts": 1.0 + i, "dir": d, "raw": json.dumps(m)}) + "\n"
                           for i, (d, m) in enumerate(MIXED)), encoding="utf-8")
    assert main(["convert", str(src), "--to", "parquet", "--table", table]) == 0
    out = src.with_suffix(".parquet" if table == "frames" else f".{table}.parquet")
    assert f"to {out}" in capsys.readouterr().out
    back = pl.read_parquet(out)
    assert back.height == len(getattr(mixed, table))
    assert main(["convert", str(src), "--to", "csv", "--table", table, "-o",
                 str(tmp_path / f"{table}.csv")]) == 0
    csv = pd.read_csv(tmp_path / f"{table}.csv", dtype=str, keep_default_na=False)
    if table != "violations":
        assert sorted(set(csv["id_key"]) - {""}) == sorted(
            {k for k in getattr(mixed, table)["id_key"] if isinstance(k, str)})


def test_convert_jsonl_is_frames_only(tmp_path, capsys):
    assert main(["convert", str(mn.sample_path("demo-stdio")), "--to", "jsonl",
                 "--table", "pairs", "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "jsonl writes frames only" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


def test_without_pyarrow_the_message_says_what_to_install(monkeypatch, tmp_path, capsys):
    t = mn.load(mn.sample_path("demo-stdio"))
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'mcp_notebook\[parquet\]'"):
        t.to_parquet(tmp_path)
    assert main(["convert", str(mn.sample_path("demo-stdio")), "--to", "parquet",
                 "-o", str(tmp_path / "x.parquet")]) == 2
    assert "mcp_notebook[parquet]" in capsys.readouterr().err


def test_undecodable_bytes_are_written_as_escapes(tmp_path):
    path = tmp_path / "bytes.ndjson"
    path.write_bytes(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":"caf\xe9"}}\n'
                     b'{"jsonrpc":"2.0","id":1,"result":{"n":"caf\xc3\xa9"}}\n')
    t = mn.load(path)
    t.to_parquet(tmp_path / "out")
    raw = pl.read_parquet(tmp_path / "out" / "frames.parquet")["raw"].to_list()
    assert any("caf\\xe9" in r for r in raw) and any("café" in r for r in raw)
    assert "caf\udce9" in t.frames["raw"].iloc[0]  # the trace keeps its exact text
