"""The console scripts `kiln` and `kiln-run`: the package's binaries."""
import os
import sys

from ._compile import tool


def _exec(name):
    path = tool(name)
    os.execv(path, [path] + sys.argv[1:])


def kiln():
    _exec("kiln")


def kiln_run():
    _exec("kiln-run")
