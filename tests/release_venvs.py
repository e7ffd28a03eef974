"""The venvs of autograd releases (``adtrace/tools/releases.py``) for the slow tests that run a target or
the experiments under each release. A release that cannot be installed here (offline, no wheel in the
local index) skips those tests with the reason; with ``ADTRACE_REQUIRE_RELEASES=1`` (set by CI,
``.ci/run``) or ``CI`` set, it is a failure instead."""

import os

import pytest

from adtrace.tools import releases
from adtrace.tools.sdist import UpstreamError

REQUIRED = os.environ.get("ADTRACE_REQUIRE_RELEASES") == "1" or bool(os.environ.get("CI"))


def installed_or_skip(*versions):
    """Each release's venv built (or found in the cache), else a skip (a failure when required)."""
    for version in versions:
        try:
            releases.environment(version)
        except UpstreamError as exc:
            if REQUIRED:
                pytest.fail(f"ADTRACE_REQUIRE_RELEASES=1 or CI, but {exc}")
            pytest.skip(str(exc))
