"""Word-level edit distance and the slope α, on hand-counted examples."""

import math

import pytest

from hallu_studio.metrics.edit_distance import edit_slope_alpha, word_edit_distance, words_of


def test_substitution_and_insertions():
    d = word_edit_distance("A red car is parked.", "A blue car is parked near it.")
    assert (d.distance, d.words, d.per_word) == (3, 5, 0.6)
    assert d.alignment == [["equal", ["A"], ["A"]], ["substitute", ["red"], ["blue"]],
                           ["equal", ["car", "is", "parked"], ["car", "is", "parked"]],
                           ["insert", [], ["near", "it"]]]


def test_deletion_of_a_clause():
    d = word_edit_distance("A cat sits on the sofa next to a dog.", "A cat sits on the sofa.")
    assert d.distance == 4 and d.words == 10 and d.per_word == pytest.approx(0.4)
    assert d.alignment[-1] == ["delete", ["next", "to", "a", "dog"], []]


def test_case_and_punctuation_do_not_count():
    assert word_edit_distance("The CAT, sleeping!", "the cat sleeping").distance == 0


def test_identical_and_empty():
    assert word_edit_distance("same words", "same words").distance == 0
    d = word_edit_distance("", "")
    assert d.distance == 0 and d.per_word is None and d.alignment == []
    assert word_edit_distance("three little words", "").distance == 3


def test_words_are_runs_of_letters_digits_apostrophes_any_script():
    assert words_of("It's 2 o’clock—naïve Müller's café, 東京!") == ["It's", "2", "o’clock", "naïve", "Müller's",
                                                                     "café", "東京"]
    assert words_of("multi-tiered, well_kept") == ["multi", "tiered", "well", "kept"]
    assert words_of("' '' -- ...") == []


def test_substitution_counts_one_per_word():
    # red->blue, small->big: two substitutions, not four operations
    assert word_edit_distance("a red small box", "a blue big box").distance == 2


def test_slope_alpha_by_least_squares():
    assert edit_slope_alpha([10, 20, 30], [5, 15, 25]) == pytest.approx(1.0)
    # y = 0.5x + 3 with noise +1, -1, -1, +1: cov 250 / var 500, the slope stays 0.5
    assert edit_slope_alpha([0, 10, 20, 30], [4, 7, 12, 19]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="different lengths"):
        edit_slope_alpha([5, 5], [1, 2])
    with pytest.raises(ValueError, match="lengths"):
        edit_slope_alpha([1, 2], [1])
    assert not math.isnan(edit_slope_alpha([1, 2], [0, 0]))
