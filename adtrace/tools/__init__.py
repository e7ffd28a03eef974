"""The tools around the pipeline: the ``adtrace`` command line, the pytest plugin, autograd's own
test suite and examples run through adtrace (``upstream``, ``autograd_examples``), the harness of
``experiments/``, and the live self-test of the hook points."""
