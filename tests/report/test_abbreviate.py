"""Long values made short: whole when they fit, else their shape, their size and an ellipsis."""

import numpy as np

from adtrace.recording.values import ArraySummary, Boxed, ContainerSummary, Sparse, summarize
from adtrace.report.abbreviate import brief, brief_outgrads, clip, each, series
from adtrace.report.format import fmt


def test_a_value_that_fits_is_written_whole():
    for value in (3.0, np.arange(8.0), (np.ones(2), True), [1, 2, 3], {"W": 1.5}):
        assert brief(value) == fmt(value)


def test_a_long_container_lists_what_fits_then_its_size():
    assert brief(list(range(100)), 60) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... 100 items]"
    params = {name: np.ones((4, 3)) for name in ("change", "forget", "ingate", "outgate", "predict")}
    text = brief(params, 60)
    assert text == "{change: array (4, 3), forget: array (4, 3), ... 5 items}"
    assert brief(tuple(np.arange(50.0)), 30).endswith(", ... 50 items)")


def test_a_summarized_container_shows_its_first_leaves_and_how_many_there_are():
    leaves = tuple((f"[{i}]", summarize(np.ones((10, 10)) * i)) for i in range(64))
    value = ContainerSummary("list", 70, leaves, more=6)
    assert len(fmt(value)) > 3000
    assert brief(value, 80) == "list of 70: [0] array (10, 10), [1] array (10, 10), ... 70 leaves"


def test_an_autograd_pair_keeps_its_flag_and_a_box_its_level():
    assert brief((np.ones((3, 4)) * 0.123456, True), 30) == "(array (3, 4),True)"
    assert brief(Boxed(list(range(40)), 1), 40) == "Box[level 1]([0, 1, 2, 3, ... 40 items])"
    summary = ArraySummary((100, 100), "float64", -0.999999, 0.999999, 0.00123456)
    assert brief(summary) == fmt(summary) and brief(summary, 20) == "array (100, 100)"


def test_nothing_is_longer_than_its_width():
    values = [list(range(1000)), {str(i): np.ones(9) for i in range(300)}, Boxed(Boxed(np.ones((50, 50)), 0), 1),
              ((np.ones(3), False),) * 30, "x" * 500]
    for value in values:
        for width in (24, 40, 80, 200):
            assert len(brief(value, width)) <= width


def test_clip_says_how_long_the_text_was():
    assert clip("abc", 5) == "abc"
    assert clip("x" * 100, 30) == "x" * 15 + "... (100 chars)"


def test_a_series_is_whole_when_it_fits_else_its_ends():
    running = [None, (2.0, False), (4.0, True), (8.0, True), (10.0, True), (12.0, True)]
    assert series(running) == "None -> (2,False) -> (4,True) -> (8,True) -> (10,True) -> (12,True)"
    assert series(running, 48) == "None -> (2,False) -> ... 3 more -> (12,True)"


def test_values_side_by_side_share_the_width():
    assert each((None, 3.0), 40) == "None, 3"
    assert each((list(range(100)), list(range(100))), 60).count("... 100 items") == 2


def test_an_outgrads_dict_is_whole_when_it_fits_else_its_first_entries():
    state = {"v1_sum": (np.array([1 / 3] * 3), False), "v0_root": (np.ones((2, 3)) / 6, False)}
    assert brief_outgrads(state) == "{v1_sum:([0.333333 0.333333 0.333333],False), v0_root:([[0.166667 0.166667 " \
                                    "0.166667] [0.166667 0.166667 0.166667]],False)}"
    assert brief_outgrads(state, 80) == "{v1_sum:(array (3,),False), v0_root:(array (2, 3),False)}"
    large = {f"v{i}_x": (float(i), False) for i in range(10_000)}
    assert brief_outgrads(large, 60) == "{v0_x:(0,False), v1_x:(1,False), ... 10000 entries}"



def test_outgrads_exactly_as_wide_as_the_room_are_written_whole():
    """Whole when the whole dict fits, to the column: not each entry cut to an even share."""
    state = {"v1_sum": (np.array([1 / 3] * 3), False), "v0": (1.0, True)}
    whole = brief_outgrads(state, 1000)
    assert whole == "{v1_sum:([0.333333 0.333333 0.333333],False), v0:(1,True)}"
    assert brief_outgrads(state, len(whole)) == whole
    assert brief_outgrads(state, len(whole) - 1) != whole  # one column less: shortened


def test_values_side_by_side_each_fitting_its_share_are_written_whole():
    """Two values of 25 characters in 54 columns: each has its share (27, less the ", " between)."""
    a, b = np.array([1.5, 2.5, 3.5, 4.5, 5.5, 6.5]), np.array([2.5, 3.5, 4.5, 5.5, 6.5, 7.5])
    assert len(fmt(a)) == len(fmt(b)) == 25
    assert each([a, b], 54) == f"{fmt(a)}, {fmt(b)}"


def test_a_long_sparse_outgrad_is_written_short_as_sparse():
    """A sparse cotangent too long for its room keeps saying it is sparse, its dense value short."""
    sparse = Sparse("ArrayVSpace(shape=(40,), dtype=float64)", "3", 2.0, np.arange(40.0))
    assert brief_outgrads({"v1_x": (sparse, False), "v0_root": (1.0, False)}, 60) == \
        "{v1_x:(Sparse(array (40,)),False), v0_root:(1,False)}"
