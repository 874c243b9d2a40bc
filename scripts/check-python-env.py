#!/usr/bin/env python3
"""Checks this Python environment against scripts/python-requirements.lock.

Exit 0 when every locked package is installed at its locked version and the
lock is closed (every requirement of a locked package is locked too), else 1
with one line per difference, naming the package. scripts/install-deps.sh
runs it to decide whether to reinstall; the ctest `python_env` runs it with
the interpreter the suite uses. With several --lock files (scripts/bench.sh
adds bench/requirements.lock, the peers the suite does not need) their union
is checked and must be closed.

  check-python-env.py [--lock FILE]... [--quiet]
"""
import argparse
import os
import re
import sys
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LOCK = os.path.join(HERE, "python-requirements.lock")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path):
    """{canonical name: (name, version)}; raises SystemExit on a bad line."""
    pins = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.\-]*)==([A-Za-z0-9_.+!\-]+)", line)
            if not m:
                raise SystemExit(f"{path}:{n}: expected NAME==VERSION, got {line!r}")
            pins[canonical(m.group(1))] = (m.group(1), m.group(2))
    if not pins:
        raise SystemExit(f"{path}: pins no package")
    return pins


def requirements(dist):
    """Names of the distributions `dist` needs here (extras left out,
    environment markers evaluated)."""
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return None
    names = []
    for spec in dist.requires or []:
        req = Requirement(spec)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        names.append(canonical(req.name))
    return names


def shown(path):
    """A path in the repository relative to its root, others as given."""
    root = os.path.dirname(HERE)
    rel = os.path.relpath(os.path.abspath(path), root)
    return path if rel.startswith("..") else rel


def read_locks(paths):
    """The union of several locks' pins; a package pinned twice must agree."""
    pins = {}
    for path in paths:
        for key, (name, version) in read_lock(path).items():
            if key in pins and pins[key][1] != version:
                raise SystemExit(f"{path}: pins {name} {version}; another lock pins "
                                 f"{pins[key][1]}")
            pins[key] = (name, version)
    return pins


def check(lock_paths):
    """The differences, one message each."""
    pins = read_locks(lock_paths)
    lock = " + ".join(shown(p) for p in lock_paths)
    problems = []
    for key, (name, version) in sorted(pins.items()):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name} is not installed; {lock} pins {version}")
            continue
        if dist.version != version:
            problems.append(f"{name} {dist.version} is installed; {lock} pins {version}")
        needs = requirements(dist)
        for need in needs or []:
            if need not in pins:
                problems.append(f"{name} requires {need}, which {lock} does not pin")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lock", action="append",
                    help=f"a lock file (repeatable; default {shown(DEFAULT_LOCK)})")
    ap.add_argument("--quiet", action="store_true", help="print nothing when it matches")
    args = ap.parse_args()
    locks = args.lock or [DEFAULT_LOCK]
    problems = check(locks)
    for p in problems:
        print(f"python_env: {p}")
    if problems:
        print(f"python_env: {sys.executable} differs from the lock; "
              "scripts/install-deps.sh installs the locked versions")
        return 1
    if not args.quiet:
        print(f"python_env: {sys.executable} matches "
              f"{' + '.join(shown(p) for p in locks)} "
              f"({len(read_locks(locks))} packages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
