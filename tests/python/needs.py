"""The Python packages a test needs beyond the standard library, and its skip without them.

A test that needs torch (or triton) calls needs.modules("torch") before importing it:
when this Python cannot import it, or imports another version than the pinned one
(tools/python/requirements.txt; one PyTorch for the whole project: Debian's 1.13, say,
is not the one the reference is checked against), the test prints why and exits 77,
which ctest reports as skipped (SKIP_RETURN_CODE). `bash tools/install_deps.sh` builds
the project's venv that has them (docs/python.md).
"""
import importlib
import os
import sys

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUIREMENTS = os.path.join(ROOT, "tools", "python", "requirements.txt")


def pinned(name):
    """The version requirements.txt pins for `name`, or None."""
    with open(REQUIREMENTS) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if "==" in line:
                package, version = (s.strip() for s in line.split("=="))
                if package.lower() == name.lower():
                    return version
    return None


def missing(name):
    """Why `name` is not usable here (a sentence), or None when it is."""
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        return f"{sys.executable} cannot import {name} ({e})"
    want = pinned(name)
    # A local version label names the build (2.11.0+cu130 on PyPI, +cpu elsewhere), not
    # the code: the GPU host's torch and this one are the same release.
    have = getattr(module, "__version__", "").split("+")[0]
    if want is not None and have != want:
        return f"{sys.executable} has {name} {have}, the project pins {want}"
    return None


def modules(*names):
    """Exits 77 (skipped) with the reason unless every one of `names` is usable."""
    for name in names:
        why = missing(name)
        if why:
            print(f"skipped: {why}; bash tools/install_deps.sh builds the project's Python venv (docs/python.md)")
            sys.exit(SKIP)
