"""Checks that the project venv holds every version pinned in requirements.txt.

Usage: check_venv.py REQUIREMENTS. Prints one line per pinned package,
"<name> <version> ok" or "<name>: pinned <v>, installed <w>", then a summary;
exits 1 on any mismatch or import failure.
"""
import importlib
import importlib.metadata
import sys

IMPORT_NAMES = {"torch": "torch", "transformers": "transformers",
                "safetensors": "safetensors", "numpy": "numpy",
                "py-cpuinfo": "cpuinfo"}


def main() -> int:
    pins = []
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, version = line.partition("==")
                pins.append((name.strip(), version.strip()))
    bad = 0
    for name, version in pins:
        try:
            installed = importlib.metadata.version(name)
            importlib.import_module(IMPORT_NAMES.get(name, name))
        except Exception as e:  # report, never a traceback
            print(f"{name}: {type(e).__name__}: {e}")
            bad += 1
            continue
        if installed != version:
            print(f"{name}: pinned {version}, installed {installed}")
            bad += 1
        else:
            print(f"{name} {version} ok")
    print(f"{len(pins) - bad} of {len(pins)} pinned packages match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
