"""``--limit N`` spreads the N items over the design (evaluate/runs/limit.py), the same rule for every benchmark."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest

from culturebench.evaluate.runs.limit import counted, limit_frame, limit_scan, round_robin, spread_positions


def keys_of(sizes: dict[str, int]) -> list[tuple]:
    """Items in release order, group by group: {"a": 2, "b": 1} -> [("a",), ("a",), ("b",)]."""
    return [(group,) for group, size in sizes.items() for _ in range(size)]


def spread(keys: list[tuple], limit: int | None, seed: int | None) -> list[int]:
    """``spread_positions`` of items with these design keys (one column per tuple place), every position when None."""
    frame = pl.DataFrame({f"column{i}": [key[i] for key in keys] for i in range(len(keys[0]))})
    kept = spread_positions(frame, frame.columns, limit, seed)
    return list(range(len(keys))) if kept is None else kept.tolist()


def test_no_limit_or_a_large_one_keeps_everything():
    keys = keys_of({"a": 3, "b": 2})
    frame = pl.DataFrame({"group": [key[0] for key in keys]})
    assert spread_positions(frame, ["group"], None, 0) is None and spread_positions(frame, ["group"], 5, 0) is None
    assert spread(keys, 50, 7) == [0, 1, 2, 3, 4]


def test_every_group_before_a_second_item_of_any():
    keys = keys_of({"q1": 100, "q2": 100, "q3": 100, "q4": 100})
    for seed in range(5):
        kept = spread(keys, 6, seed)
        counts = Counter(keys[p][0] for p in kept)
        assert set(counts) == {"q1", "q2", "q3", "q4"}  # the first 6 rows would all be q1's
        assert sorted(counts.values()) == [1, 1, 2, 2]
        assert kept == sorted(kept) and len(set(kept)) == 6


def test_a_small_group_gives_its_share_to_the_others():
    keys = keys_of({"a": 5, "b": 5, "c": 2})
    counts = Counter(keys[p][0] for p in spread(keys, 9, 0))
    assert counts["c"] == 2 and counts["a"] + counts["b"] == 7 and abs(counts["a"] - counts["b"]) == 1


def test_fewer_items_than_groups_takes_one_from_each_of_n_groups():
    keys = keys_of({g: 3 for g in "abcde"})
    counts = Counter(keys[p][0] for p in spread(keys, 3, 0))
    assert len(counts) == 3 and set(counts.values()) == {1}


def test_seeded_same_seed_same_items_other_seeds_other_items():
    keys = keys_of({"a": 20, "b": 20})
    assert spread(keys, 4, 11) == spread(keys, 4, 11)
    assert len({tuple(spread(keys, 4, seed)) for seed in range(10)}) > 1  # items within a group drawn


def test_two_columns_cover_the_first_column_first():
    keys = [(dimension, domain) for dimension in ("PDI", "IDV", "UAI") for domain in ("d1", "d2", "d3", "d4")
            for _ in range(2)]
    for seed in range(5):
        kept = spread(keys, 3, seed)
        assert {keys[p][0] for p in kept} == {"PDI", "IDV", "UAI"}


def test_coverage_says_what_was_asked_and_warns():
    frame = pl.DataFrame({"country": ["X"] * 4 + ["Y"] * 4 + ["Z"] * 1, "story": list("abcdefghi")})
    kept, covers = limit_frame(frame, ["country"], 2, 0, item="stories", columns=["countries"])
    assert kept.height == 2 and kept["country"].n_unique() == 2
    assert covers.text() == "covers 2/3 countries, 1 story per country (2 of 9 stories: --limit spread by seed 0)"
    warnings = covers.warnings()
    assert warnings[0].startswith("only 2 of 3 countries asked: per-country results and plots leave 1 out")
    assert warnings[1].startswith("1 story in the smallest country")
    _, everything = limit_frame(frame, ["country"], None, 0, item="stories", columns=["countries"])
    assert everything.text() == "covers 3/3 countries, 1-4 stories per country (all 9 stories)"


@pytest.mark.parametrize("n, plural, expected", [(1, "stories", "1 story"), (2, "stories", "2 stories"),
                                                 (1, "questions", "1 question"), (1, "countries", "1 country"),
                                                 (1_200, "rows", "1,200 rows")])
def test_counted(n, plural, expected):
    assert counted(n, plural) == expected


def test_round_robin_takes_every_queue_s_first_items_before_any_second():
    queues = [np.asarray([1, 2, 3]), np.asarray([4]), np.asarray([5, 6]), np.asarray([7, 8, 9, 10])]
    # in order: 1 4 5 7, then 2 6 8, then 3 9, then 10
    for limit, expected in ((3, [1, 4, 5]), (6, [1, 4, 5, 7, 2, 6]), (9, [1, 4, 5, 7, 2, 6, 8, 3, 9])):
        assert sorted(round_robin(queues, limit).tolist()) == sorted(expected)


def test_a_limited_scan_keeps_the_rows_and_coverage_of_the_limited_frame():
    frame = pl.DataFrame({"question": [f"Q{i % 7}" for i in range(500)], "row": list(range(500))})
    for limit, seed in ((None, 0), (40, 0), (40, 3), (499, 1), (9, 2)):
        kept, covers = limit_scan(frame.lazy(), ["question"], limit, seed, item="rows", columns=["questions"])
        expected, expected_covers = limit_frame(frame, ["question"], limit, seed, item="rows", columns=["questions"])
        assert kept.equals(expected)
        assert covers == expected_covers

