"""``adtrace upstream --golden`` (``tools/golden.py``): what changed between two releases' recordings, as
events; the committed ``reports/upstream_diff.md`` lists every difference the releases show today."""

from pathlib import Path

import numpy as np
import pytest

from readme import readme, stated

from adtrace.diff.calls import record_call
from adtrace.tools import golden

REPO = Path(__file__).resolve().parents[2]
C = 1.1


def scaled(x):
    return np.sin(x) * C


def scaled_by_the_next_float(x):
    return np.sin(x) * np.nextafter(C, 2.0)


def scaled_twice(x):
    return np.sin(x) * C * 1.0


def test_a_value_moved_by_one_ulp_is_a_change_named_with_its_ulps():
    a, b = record_call(scaled, (0.5,)), record_call(scaled_by_the_next_float, (0.5,))
    found = golden.changes("1.8.0", "1.9.0", a, b)
    assert any("`v2_multiply` (multiply)" in event and "forward value" in event and "moved" in event
               for event in found), found
    assert any(event.startswith("first divergence:") and event.endswith("by 1 ulp") for event in found), found
    assert golden.changes("1.8.0", "1.9.0", a, record_call(scaled, (0.5,))) == []


def test_a_node_one_release_adds_is_named_added():
    found = golden.changes("1.8.0", "1.9.0", record_call(scaled, (0.5,)), record_call(scaled_twice, (0.5,)))
    assert any(event.startswith("node added in 1.9.0: `v3_multiply` (multiply)") for event in found), found
    removed = golden.changes("1.9.0", "1.8.0", record_call(scaled_twice, (0.5,)), record_call(scaled, (0.5,)))
    assert any(event.startswith("node removed in 1.8.0: `v3_multiply`") for event in removed), removed


def test_an_experiment_that_raises_under_one_release_is_a_change():
    recording = record_call(scaled, (0.5,))
    assert golden.changes("1.7.0", "1.8.0", "ValueError: no", recording) == [
        "under 1.7.0 it raises ValueError: no; under 1.8.0 it records"]
    assert golden.changes("1.7.0", "1.8.0", "ValueError: no", "ValueError: no") == []


def test_an_experiment_without_a_backward_pass_under_both_releases_is_no_change():
    """independent_output's recording has no pass (its output does not depend on its input): a diff of it
    is refused (NothingToDiff), which stopped --golden; under both releases it is no change."""
    import adtrace

    with adtrace.record() as none:
        pass
    assert golden.changes("1.8.0", "1.9.0", none, none) == []
    assert golden.changes("1.8.0", "1.9.0", none, record_call(scaled, (0.5,))) == [
        "a backward pass under 1.9.0 only"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ulps_count_floats_in_between_across_zero(dtype):
    x = np.array([1.0, -0.0, -1e-30], dtype=dtype)
    y = np.array([np.nextafter(dtype(1.0), dtype(2.0)), 0.0, -1e-30], dtype=dtype)
    assert golden.ulps_between(x, y) == 1
    assert golden.ulps_between(np.array([-np.finfo(dtype).smallest_subnormal], dtype=dtype),
                               np.array([np.finfo(dtype).smallest_subnormal], dtype=dtype)) == 2
    assert golden.ulps_between(x, y[:2]) is None and golden.ulps_between("a", "b") is None


def test_the_report_lists_each_pair_of_neighbouring_releases_and_its_events():
    a, b = record_call(scaled, (0.5,)), record_call(scaled_twice, (0.5,))
    text = golden.markdown({"1.7.0": {"e": a}, "1.8.0": {"e": a}, "1.9.0": {"e": b}})
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == ["## autograd 1.7.0 -> 1.8.0", "## autograd 1.8.0 -> 1.9.0"]
    events = golden.listed(text)
    assert all(section == "## autograd 1.8.0 -> 1.9.0" for section, _ in events) and events
    line = scaled_twice.__code__.co_firstlineno + 1  # (its return: where the node is made)
    assert ("## autograd 1.8.0 -> 1.9.0", "- e: node added in 1.9.0: `v3_multiply` (multiply) "
            f"(tests/tools/test_golden.py:{line})") in events


def test_the_readme_names_the_supported_releases():
    from adtrace.tools import releases

    said = " ".join(readme().split()).split("under every supported release (", 1)[1].split(")", 1)[0]
    assert said == ", ".join(releases.supported())


@pytest.mark.slow
def test_the_committed_report_lists_every_difference_between_releases():
    """Every supported release's recordings of every experiment, today: an event the committed file
    does not list (a new difference) fails, naming it."""
    from release_venvs import installed_or_skip

    from adtrace.tools import releases

    versions = releases.supported()
    installed_or_skip(*versions)
    recorded = golden.record_all(versions, REPO / "experiments")
    text = golden.markdown(recorded)
    committed = (REPO / "reports" / "upstream_diff.md").read_text(encoding="utf-8")
    new = golden.listed(text) - golden.listed(committed)
    assert not new, f"differences reports/upstream_diff.md does not list (adtrace upstream --golden): {sorted(new)}"
    assert [line for line in text.splitlines() if line.startswith("## ")] == \
        [line for line in committed.splitlines() if line.startswith("## ")]
    assert len(recorded[versions[-1]]) == stated(r"every experiment with an autograd recording \((\d+)\)")
