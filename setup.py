"""The build of adtrace's optional compiled twins (``adtrace/recording/compiled.py``): each a C module beside the
pure-Python module it does the same as, faster. Every one is ``optional``: on a machine without a C compiler
or Python's headers, ``pip install`` warns and goes on, and adtrace runs the pure-Python code, which stays
the reference (``adtrace doctor`` says which is in use). Everything else is in ``pyproject.toml``."""

from pathlib import Path

from setuptools import Extension, setup


def twin(module):
    """The C twin ``module`` (dotted), built from the ``.c`` file of the same path (and the ``.h`` files beside
    it or in ``adtrace/recording``, which it may include: a change rebuilds it; the sdist carries them as package
    data, pyproject.toml)."""
    source = module.replace(".", "/") + ".c"
    folders = {Path(source).parent, Path("adtrace/recording")}
    headers = sorted(str(path) for folder in folders for path in folder.glob("*.h"))
    return Extension(module, [source], depends=headers, optional=True)


setup(ext_modules=[twin(module) for module in (
    "adtrace.recording.value_class._descriptors",
    "adtrace.recording.value_class._hooks",
    "adtrace.recording.value_class._tracked",
    "adtrace.recording.value_class._recorder",
    "adtrace.recording.value_class._deferred",
    "adtrace.recording.autograd._wrappers",
    "adtrace.recording._values",
)])
