"""Recompute adtrace/drift_fingerprints.json from the released autograd wheels.

    python .ci/fingerprints.py 1.7.0 1.8.0 1.9.0 1.9.1

Each wheel is fetched from the package index with ``pip download --no-deps --only-binary :all:``
into a temporary folder (never committed), opened as a zip, and the watched functions'
normalized-AST fingerprints (adtrace.drift.fingerprint) are computed from its source files.
"""

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from adtrace.recording.autograd import drift  # noqa: E402


def release_fingerprints(version, folder):
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                    "-d", folder, f"autograd=={version}"], check=True)
    wheel = next(Path(folder).glob(f"autograd-{version}-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        def source_of(module):
            return archive.read(module.replace(".", "/") + ".py").decode()

        return drift.fingerprints_of(source_of)


def main(versions):
    data = {
        "how": "sha256 (first 16 hex digits) of ast.dump(annotate_fields=False) of each function's AST "
               "with docstrings removed, parsed from the release wheel's source; see .ci/fingerprints.py",
        "releases": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        for version in versions:
            data["releases"][version] = release_fingerprints(version, folder)
    drift._DATA.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(f"wrote {drift._DATA.name} for {', '.join(versions)}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["1.7.0", "1.8.0", "1.9.0", "1.9.1"])
