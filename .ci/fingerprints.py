"""Recompute adtrace/recording/autograd/drift_fingerprints.json from the released autograd wheels.

    python .ci/fingerprints.py [--output FILE] [1.7.0 1.8.0 1.9.0 1.9.1]

Each wheel is fetched from the package index with ``pip download --no-deps --only-binary :all:``
(a wheel installs by unpacking: nothing of it runs) into a temporary folder, never committed,
opened as a zip, and the watched functions' canonical-AST fingerprints
(adtrace.recording.autograd.drift.fingerprint) are computed from its source files. The watched
functions come from the hook points table, so this checkout's adtrace (and the autograd it imports)
must be importable; every supported Python must write the same file (tests/recording/autograd/test_drift.py checks
the installed release's fingerprints under the running Python).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from adtrace.recording.autograd import drift  # noqa: E402

RELEASES = ["1.7.0", "1.8.0", "1.9.0", "1.9.1"]


def release_fingerprints(drift, version, folder):
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                    "-d", folder, f"autograd=={version}"], check=True)
    wheel = next(Path(folder).glob(f"autograd-{version}-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        def source_of(module):
            return archive.read(module.replace(".", "/") + ".py").decode()

        return drift.fingerprints_of(source_of)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=RELEASES)
    parser.add_argument("--output", type=Path, default=drift._DATA)
    args = parser.parse_args(argv)
    data = {
        "how": "sha256 (first 16 hex digits) of adtrace.recording.autograd.drift.canonical(each function's AST): "
               "fields sorted by name, None and empty fields and docstrings left out; parsed from the release "
               "wheel's source by .ci/fingerprints.py",
        "releases": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        for version in args.versions:
            data["releases"][version] = release_fingerprints(drift, version, folder)
    args.output.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(f"wrote {args.output.name} for {', '.join(args.versions)}")


if __name__ == "__main__":
    main(sys.argv[1:])
