"""Shared test configuration: pytest's own pytester, for the tests that run pytest in a subprocess."""

pytest_plugins = ["pytester"]
