"""mn.teach: planted faults agree with the checker, graders accept right answers and teach
on wrong ones, and the helpers the notebooks use (cite, show, what_if, run_rule) hold up."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from helpers import INIT, load_rows, note, ok, req
from mcp_notebook.protocol.rules import RULES, Rule, rule
from mcp_notebook.teach import BASES, FAULTS, exercise, plant
from mcp_notebook.teach.faults import found

FIXTURE = Path(__file__).parent / "fixtures" / "teach" / "session.tap.jsonl"
DATA = Path(mn.__file__).resolve().parent.parent / "data"
SEEDS = range(4)


def _bases() -> list[Path]:
    paths = [FIXTURE] + [DATA / f"{stem}.jsonl" for stem in BASES]
    return [p for p in paths if p.exists()]


@pytest.fixture(scope="module")
def traces():
    return {p.stem: mn.load(p) for p in _bases()}


def _required(key):
    return {s: r for s, rs in key.items() for r, req_ in rs.items() if req_}


# -- planting: the key is exactly what the checker finds ------------------------------------

@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("base", [p.stem for p in _bases()])
def test_plant_adds_exactly_the_key(traces, fault, base):
    original = traces[base]
    for seed in SEEDS:
        planted, key = plant(original, fault, seed)
        before, after = found(original), found(planted)
        planted_findings = {(s, r) for s, rs in key.items() for r in rs}
        assert planted_findings <= after
        # everything else the checker says was already said about the original
        assert len(after) == len(before) + len(planted_findings)
        assert sorted(r for _, r in after - planted_findings) == sorted(r for _, r in before)
        assert FAULTS[fault].rule in {r for rs in key.values() for r in rs}
        assert len(planted) >= len(original) - 1


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_frames_are_what_the_fault_says(traces, fault):
    """Look at the planted frames themselves, independently of the checker."""
    t, key = plant(traces["session.tap"], fault, seed=0)
    seq = next(s for s, rs in key.items() if FAULTS[fault].rule in rs)
    msg, row = t.message(seq), t.frames.iloc[seq]
    if fault == "answered-twice":
        first = t.pairs[(t.pairs["outcome"] != "duplicate")
                        & (t.pairs["id_key"] == row["id_key"])]["response_seq"].iloc[0]
        assert t.frames.loc[int(first), "raw"] == row["raw"]
    elif fault == "id-type-flipped":
        assert isinstance(msg["id"], str) and msg["id"].isdigit()
    elif fault == "reply-says-ok-and-fails":
        assert "result" in msg and "error" in msg and row["kind"] == "error"
    elif fault == "reply-to-notification":
        assert row["kind"] in ("result", "error")
        asked = t.frames[(t.frames["kind"] == "request") & (t.frames["id_key"] == row["id_key"])]
        assert asked["method"].str.startswith("notifications/").all() and len(asked) == 1
    elif fault == "call-never-returns":
        assert row["kind"] == "request" and len(t) == len(traces["session.tap"]) - 1
    elif fault == "result-is-a-bare-value":
        assert not isinstance(msg["result"], dict)
    elif fault == "same-id-twice-in-flight":
        same = t.frames[(t.frames["kind"] == "request") & (t.frames["id_key"] == row["id_key"])]
        assert len(same) == 2 and same["raw"].nunique() == 1
    elif fault == "answer-after-cancel":
        cancel = t.frames[t.frames["method"] == "notifications/cancelled"]
        assert len(cancel) == 1 and int(cancel["seq"].iloc[0]) < seq


def test_plant_is_deterministic_and_seeds_differ(traces):
    base = traces[_bases()[-1].stem]
    a = plant(base, "duplicate-response", seed=3)
    b = plant(base, "duplicate-response", seed=3)
    assert a[1] == b[1] and list(a[0].frames["raw"]) == list(b[0].frames["raw"])
    keys = {tuple(plant(base, "duplicate-response", seed=s)[1]) for s in range(6)}
    assert len(keys) > 1


def test_plant_refuses_a_trace_with_no_site(tmp_path):
    t = load_rows(tmp_path, INIT)  # initialize only: nothing to duplicate or cancel
    for fault in ("duplicate-response", "late-result-after-cancel", "missing-response"):
        with pytest.raises(ValueError, match="plants cleanly"):
            plant(t, fault)


def test_planted_trace_shows_no_trace_of_the_plant(traces):
    t, _ = plant(traces["session.tap"], "duplicate-response", seed=1)
    assert t.paths == ["session.tap.jsonl"]
    assert t.frames["source"].str.match(r"^session\.tap\.jsonl:\d+$").all()
    assert t.frames["ts"].is_monotonic_increasing


def test_exercise_uses_the_bundled_traces_and_says_so():
    ex = exercise("call-never-returns", seed=2)
    assert Path(ex.trace.paths[0]).name.removesuffix(".jsonl") in BASES
    with pytest.raises(KeyError, match="did you mean 'call-never-returns'"):
        exercise("call-never-return")
    assert exercise("missing-response", seed=2).name == "call-never-returns"  # old name
    table = mn.teach.exercises()
    assert set(table["name"]) == set(FAULTS) and set(table["rule"]) <= {r.code for r in RULES}


# -- grading --------------------------------------------------------------------------------

@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_grader_accepts_the_right_answer(fault):
    ex = exercise(fault, seed=0, trace=FIXTURE)
    required = _required(ex._key)
    feedback = ex.check(required)
    assert feedback.correct and bool(feedback)
    assert feedback.lines[0].startswith("Correct!")
    full = {s: sorted(rs) for s, rs in ex._key.items()}  # consequences named too: still right
    assert ex.check(full).correct
    seqs = sorted(required)
    if len(set(required.values())) == 1:
        assert ex.check(seqs=seqs, rule=FAULTS[fault].rule).correct
    frames_only = ex.check(seqs=seqs)  # the frames without the rules: half right
    assert not frames_only.correct and frames_only.score == 0.5
    assert frames_only.lines[0].startswith("Half right")


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_grader_rejects_a_wrong_answer_with_feedback_that_teaches(fault):
    ex = exercise(fault, seed=0, trace=FIXTURE)
    planted = set(ex._key)
    wrong = next(s for s in range(len(ex._planted)) if s not in planted
                 and not any(q == s for q, _ in found(ex._planted)))
    feedback = ex.check({wrong: FAULTS[fault].rule})
    assert not feedback.correct
    text = repr(feedback)
    assert f"seq {wrong}: this frame is fine" in text
    assert "still missing" in text
    assert rule(FAULTS[fault].rule).cite in text  # points at the spec sentence...
    assert "Hint: " + FAULTS[fault].hints[0] in text
    for seq in planted:  # ...without giving the answer away
        assert not re.search(rf"\bseq {seq}\b", text)


def test_right_frame_wrong_rule_and_typos():
    ex = exercise("duplicate-response", seed=0, trace=FIXTURE)
    (seq,) = ex._key
    text = repr(ex.check({seq: "orphan-response"}))
    assert "right frame, but it does not break `orphan-response`" in text
    assert rule("duplicate-response").cite in text
    text = repr(ex.check({seq: "duplicate-respons"}))
    assert "not a rule code" in text and "Did you mean `duplicate-response`?" in text


def test_hints_narrow_with_each_attempt_and_only_then_show_frames():
    ex = exercise("result-not-object", seed=1, trace=FIXTURE)
    (seq,) = ex._key
    wrong = 0 if seq != 0 else 1
    first, second, third = (repr(ex.check({wrong: "result-not-object"})) for _ in range(3))
    assert "attempt 1" in first and "attempt 3" in third
    assert FAULTS["result-is-a-bare-value"].hints[0] in first
    assert FAULTS["result-is-a-bare-value"].hints[1] in second
    assert "Look between seq" in third and "after two tries `ex.solution()`" in third
    lo, hi = map(int, re.search(r"between seq (\d+) and seq (\d+)", third).groups())
    assert lo <= seq <= hi
    assert [ex.hint() for _ in range(4)][-1].startswith("Look between seq")


def test_findings_of_the_original_capture_are_noted_not_wrong():
    base = mn.load(DATA / "demo-stdio-raw-frames.jsonl")
    ex = exercise("duplicate-response", seed=0, trace=base)
    (dup,) = ex._key
    parse_error = int(ex._planted.violations.query("rule == 'parse-error'")["seq"].iloc[0])
    feedback = ex.check({dup: "duplicate-response", parse_error: "parse-error"})
    assert feedback.correct
    assert any("in the original capture" in line for line in feedback.lines)


def test_empty_answer_is_not_an_attempt():
    ex = exercise("missing-response", seed=0, trace=FIXTURE)
    feedback = ex.check({})
    assert not feedback and feedback.lines[0] == "Nothing to grade yet." and ex.attempts == 0


def test_solution_lists_the_key_as_the_checker_reports_it():
    ex = exercise("id-type-flipped", seed=0, trace=FIXTURE)
    assert "Try first" in ex.solution()  # not before two graded attempts
    ex.check({0: "id-type-mismatch"}), ex.check({1: "id-type-mismatch"})
    sol = ex.solution()
    assert len(ex.trace.violations)  # the solution opens the trace
    assert {(int(s), r) for s, r in zip(sol["seq"], sol["rule"], strict=True)} == {
        (s, r) for s, rs in ex._key.items() for r in rs}
    assert dict(zip(sol["rule"], sol["required"], strict=True)) == {
        "id-type-mismatch": True, "unanswered-request": False}
    assert list(sol.columns[:3]) == ["rule", "severity", "required"]


def test_feedback_and_exercise_render_as_escaped_html():
    ex = exercise("duplicate-response", seed=0, trace=FIXTURE)
    (seq,) = ex._key
    html = ex.check({seq: "<script>"})._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<code>" in ex._repr_html_() and ex.question in repr(ex)


# -- the helpers the notebooks use ----------------------------------------------------------

def test_cite_shows_the_catalogue_word_for_word():
    c = mn.teach.cite("result-and-error", "big-id")
    assert rule("result-and-error").cite in repr(c)
    assert "all versions" in repr(c) and "warning" in repr(c)
    html = c._repr_html_()
    assert html.count("<blockquote") == 2 and "“Either the result member" in html
    with pytest.raises(KeyError):
        mn.teach.cite("no-such-rule")


def test_show_decodes_cuts_and_escapes():
    hostile = mn.load(Path(__file__).parent / "fixtures" / "widgets" / "hostile.tap.jsonl")
    shown = mn.teach.show(hostile, *range(len(hostile)), max_lines=3)
    html = shown._repr_html_()
    assert "<script" not in html.lower().replace("&lt;script", "")
    t = mn.load(FIXTURE)
    text = repr(mn.teach.show(t, 0, 4, max_lines=5))
    assert text.startswith("seq 0 · client → server · request · initialize")
    assert "more lines)" in text


def test_what_if_replaces_inserts_and_deletes(tmp_path):
    t = load_rows(tmp_path, INIT + [("c2s", req(1, "ping")), ("s2c", ok(1))])
    changed = mn.teach.what_if(
        t, replace={4: ok(1, {"x": 1})},
        insert_after={2: [note("notifications/message"), ("s2c", note("notifications/message"))]},
        delete=[3])
    assert list(changed.frames["direction"]) == ["c2s", "s2c", "c2s", "c2s", "s2c", "s2c"]
    assert changed.message(5) == ok(1, {"x": 1})
    assert len(t) == 5 and t.violations.empty  # the original is untouched
    # the answer lost its ping, and a client does not send notifications/message
    assert sorted(zip(changed.violations["seq"], changed.violations["rule"], strict=True)) == [
        (3, "wrong-direction"), (5, "orphan-response")]


def test_run_rule_shapes_findings_like_the_checker(tmp_path):
    t = load_rows(tmp_path, INIT + [("c2s", req(1, "ping")), ("s2c", ok(1))])
    mine = Rule("pings", "info", "Pings are counted", "A sentence.", "here", "Nothing to do.",
                topic="lifecycle")
    out = mn.teach.run_rule(t, mine, lambda tr: [(3, None, "a ping")])
    assert list(out.columns) == list(t.violations.columns)
    assert [str(d) for d in out.dtypes] == [str(d) for d in t.violations.dtypes]
    assert out.iloc[0]["message"] == "Pings are counted: a ping. Nothing to do."
    assert out.iloc[0]["spec"] == "“A sentence.” (here)"
    both = mn.teach.with_rule(t, mine, lambda tr: [(3, 0, "")])
    assert len(both) == len(t.violations) + 1
    only_2026 = Rule("x", "info", "X", "s", "src", "a", versions=("2026-07-28",))
    assert mn.teach.run_rule(t, only_2026, lambda tr: [(3, None, "")]).empty


def test_check_install_is_all_green_here():
    table = mn.teach.check_install()
    assert list(table.columns) == ["check", "ok", "detail"]
    assert table["ok"].all(), table.to_string()


def test_fixture_is_a_clean_session():
    t = mn.load(FIXTURE)
    assert t.violations.empty and isinstance(t.frames, pd.DataFrame)
    assert set(t.pairs["outcome"]) == {"result", "tool_error", "error"}


# -- exercise sheets: one notebook per learner -------------------------------------------------

def test_worksheets_differ_by_learner_and_repeat_for_one(tmp_path):
    import nbformat

    ada, bob = mn.teach.worksheets(["Ada", "Bob"], tmp_path)
    assert (ada.name, bob.name) == ("ada.ipynb", "bob.ipynb")
    a, b = (nbformat.read(p, as_version=4) for p in (ada, bob))
    nbformat.validate(a)
    seeds = [re.findall(r"seed=(\d+)", "".join(c.source for c in nb.cells)) for nb in (a, b)]
    assert len(seeds[0]) == len(FAULTS) and seeds[0] != seeds[1]
    again = mn.teach.worksheets(["Ada"], tmp_path / "again")[0]
    assert again.read_text() == ada.read_text()
    with pytest.raises(KeyError, match="no exercise 'nope'"):
        mn.teach.worksheets(["Ada"], tmp_path, ["nope"])


@pytest.mark.slow
def test_a_worksheet_runs_and_grades_the_right_answer(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    (path,) = mn.teach.worksheets(["Grace Hopper"], tmp_path,
                                  ["answered-twice", "id-type-flipped"])
    nb = nbformat.read(path, as_version=4)
    for k in (1, 2):  # what a learner who found every planted frame would write
        nb.cells.append(nbformat.v4.new_code_cell(
            f"right = ex{k}.check({{s: [r for r, req in rs.items() if req] "
            f"for s, rs in ex{k}._key.items()}})\n"
            f"assert right.correct, right\nright"))
    NotebookClient(nb, kernel_name="python3", timeout=120, startup_timeout=120,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    texts = [o.get("data", {}).get("text/plain", "") for c in nb.cells for o in c.get("outputs", [])]
    assert [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"] == []
    assert sum("Nothing to grade yet." in t for t in texts) == 2  # the empty answers, as given
    assert sum(t.startswith("Correct!") for t in texts) == 2


# -- exercises that need understanding ---------------------------------------------------------

ALL_KINDS = [*sorted(FAULTS), "classify", "respond"]


def _make(kind, learner="Ada Lovelace"):
    if kind == "classify":
        return mn.teach.classify(learner)
    if kind == "respond":
        return mn.teach.respond(learner)
    return exercise(kind, learner=learner)


def test_exercise_names_describe_the_symptom_not_the_rule():
    codes = {r.code for r in RULES}
    assert not set(FAULTS) & codes
    assert all(FAULTS[f].rule in codes for f in FAULTS)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_answering_from_the_checker_output_is_refused(kind):
    """The learner's trace has no findings or outcomes until the exercise is graded."""
    ex = _make(kind)
    with pytest.raises(mn.teach.Hidden, match="hidden in an exercise"):
        {int(s): r for s, r in zip(ex.trace.violations["seq"], ex.trace.violations["rule"], strict=True)}
    assert "outcome" not in ex.trace.pairs.columns
    assert "is_tool_error" not in ex.trace.frames.columns
    for ask in (ex.trace.summary, ex.trace.latency_by_method, lambda: ex.trace.full,
                lambda: ex.trace.to_otlp()):
        with pytest.raises(mn.teach.Hidden):
            ask()
    with pytest.raises(TypeError, match="does not replay an exercise"):
        mn.teach.what_if(ex.trace)
    assert len(ex.trace) and len(mn.teach.show(ex.trace, 1).items) == 1  # frames stay readable
    assert mn.teach.sequence(ex.trace).svg.startswith("<svg")


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_checker_output_would_have_been_the_answer(fault):
    """What the refused shortcut would give is exactly what grading accepts, so the hiding
    matters; graded correct, the trace opens."""
    ex = exercise(fault, learner="Ada Lovelace")
    v = ex._planted.violations
    shortcut = {}
    for s, r in zip(v["seq"], v["rule"], strict=True):
        shortcut.setdefault(int(s), []).append(r)
    assert ex.check(shortcut).correct and ex.solved
    assert len(ex.trace.violations) == len(v) and "outcome" in ex.trace.pairs.columns


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_two_learners_get_different_plants(fault):
    a, b = exercise(fault, learner="Ada Lovelace"), exercise(fault, learner="Grace Hopper")
    assert a.seed != b.seed
    assert (a.trace.paths, a._key, list(a._planted.frames["raw"])) != (
        b.trace.paths, b._key, list(b._planted.frames["raw"]))
    again = exercise(fault, learner="ada lovelace ")
    assert again._key == a._key and again.trace.paths == a.trace.paths


def test_classify_and_respond_differ_by_learner():
    names = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra"]
    assert len({(tuple(c.seqs), c.trace.paths[0]) for c in map(mn.teach.classify, names)}) > 1
    assert len({(r.case.name, r.request_seq) for r in map(mn.teach.respond, names)}) > 1


@pytest.mark.parametrize("seed", range(6))
def test_classify_grades_by_the_members_of_each_answer(seed):
    ex = mn.teach.classify(seed=seed)
    truth = {}
    for s in ex.seqs:  # read the frames independently of the library's outcome column
        msg = ex.trace.message(s)
        truth[s] = ("protocol error" if "error" in msg else
                    "tool error" if msg["result"].get("isError") else "result")
    assert len(set(truth.values())) >= 2
    assert not ex.check({s: "result" for s in ex.seqs}).correct
    flipped = {s: {"tool error": "protocol error", "protocol error": "tool error",
                   "result": "tool error"}[v] for s, v in truth.items()}
    assert not ex.check(flipped).correct
    assert ex.check({s: v.replace(" ", "_") for s, v in truth.items()}).correct


def _right_response(ex):
    mid = ex.trace.message(ex.request_seq)["id"]
    return {"jsonrpc": "2.0", "id": mid, **{
        "result": {"result": {}},
        "tool error": {"result": {"content": [{"type": "text", "text": "division by zero"}],
                                  "isError": True}},
        "protocol error": {"error": {"code": ex.case.code, "message": "bad"}},
    }[ex.case.kind]}


@pytest.mark.parametrize("seed", range(len(mn.teach.tasks.CASES)))
def test_respond_is_graded_by_the_checker(seed):
    ex = mn.teach.respond(seed=seed)
    assert ex.trace.frames["seq"].max() == len(ex._full) - 2  # the real answer is not shown
    right = _right_response(ex)
    assert ex.check(right).correct
    wrong_id = right | {"id": str(right["id"])}
    feedback = ex.check(wrong_id)
    assert not feedback.correct and "id-type-mismatch" in repr(feedback)
    both = right | {"result": {}, "error": {"code": -32603, "message": "x"}}
    assert "result-and-error" in repr(ex.check(both))
    if ex.case.code is not None:
        wrong_code = right | {"error": {"code": -32603, "message": "Internal error"}}
        assert not ex.check(wrong_code).correct
    assert not ex.check("{not json").correct


def test_tool_error_versus_protocol_error_in_respond():
    tool = next(mn.teach.respond(seed=s) for s in range(8)
                if mn.teach.respond(seed=s).case.kind == "tool error")
    mid = tool.trace.message(tool.request_seq)["id"]
    text = repr(tool.check({"jsonrpc": "2.0", "id": mid,
                            "error": {"code": -32603, "message": "division by zero"}}))
    assert "should be a tool error" in text


def test_a_room_of_learners_rarely_shares_a_plant():
    """Nine learners, at least seven plants of each fault. A choice of the base trace only
    (six bases: at most six plants) or a seed that ignores the name (one) fails. With the
    seeds spread evenly over a fault's sites (18 for the fewest, about 68 for the others),
    nine learners give fewer than seven plants with a chance of 4% and 0.03% (twelve
    learners and nine plants, as before: 10% and 0.6%), for a quarter fewer exercises."""
    room = [f"Learner {n}" for n in range(9)]
    for fault in sorted(FAULTS):
        plants = {(ex.trace.paths[0], tuple(sorted(ex._key))) for ex in
                  (exercise(fault, learner=name) for name in room)}
        assert len(plants) >= 7, (fault, len(plants))


def test_a_learners_exercise_in_a_fresh_kernel_imports_no_notebook_tooling():
    """What a notebook's ``mn.teach.exercise(..., learner=NAME)`` costs a learner's fresh
    kernel: the seed is a hash, so neither nbformat nor jsonschema is imported for it
    (jsonschema's format checkers build grammars at import: about 1.3 s of CPU a kernel,
    paid by each notebook of the tutorial); the same seed as ``notebook.learner_seed``."""
    import subprocess
    import sys

    code = ("import sys\nimport mcp_notebook as mn\n"
            "ex = mn.teach.exercise('answered-twice', learner='Ada')\n"
            "print(ex.seed, sorted(m for m in ('nbformat', 'jsonschema') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    from mcp_notebook.notebook import learner_seed
    from mcp_notebook.teach import seed_for

    assert done.stdout.split(maxsplit=1) == [str(seed_for("Ada", "answered-twice")), "[]\n"]
    assert seed_for("Ada", "answered-twice") == learner_seed("ada\nanswered-twice")
