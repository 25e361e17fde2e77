"""The representative captures of the export tests hold every feature of the whole corpus
(tests/exports/captures.py)."""

from __future__ import annotations

from tests.exports.captures import CAPTURES, REPRESENTATIVE, REPRESENTATIVE_NAMES, features


def test_every_representative_capture_exists() -> None:
    assert sorted(p.name for p in REPRESENTATIVE) == sorted(REPRESENTATIVE_NAMES)


def test_the_representative_captures_hold_every_feature_of_the_corpus() -> None:
    held = set().union(*(features(p) for p in REPRESENTATIVE))
    missing = {}
    for path in CAPTURES:
        for tag in sorted(features(path) - held, key=str):
            missing.setdefault(tag, path.name)
    assert not missing, (
        "captures with a feature no representative capture has (add them to "
        f"REPRESENTATIVE_NAMES in tests/exports/captures.py): {missing}")


def test_a_feature_of_one_capture_alone_is_seen() -> None:
    """The cover check is not blind: leaving out the one capture with big ids loses a tag."""
    rest = [p for p in REPRESENTATIVE if p.name != "demo-stdio-big-id.jsonl"]
    held = set().union(*(features(p) for p in rest))
    big = next(p for p in CAPTURES if p.name == "demo-stdio-big-id.jsonl")
    assert features(big) - held
