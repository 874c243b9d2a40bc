"""python -m kiln --cmake-dir | --cache-dir | --clear-cache | --providers"""
import argparse

import kiln

p = argparse.ArgumentParser(prog="python -m kiln", description=__doc__)
p.add_argument("--cmake-dir", action="store_true", help="print kiln's CMake package directory")
p.add_argument("--cache-dir", action="store_true", help="print the compile cache's directory")
p.add_argument("--clear-cache", action="store_true", help="remove every cached model")
p.add_argument("--providers", action="store_true", help="print the available providers")
a = p.parse_args()
if a.cmake_dir:
    print(kiln.get_cmake_dir())
if a.cache_dir:
    print(kiln.cache_dir())
if a.clear_cache:
    kiln.clear_cache()
if a.providers:
    print("\n".join(kiln.get_available_providers()))
if not any(vars(a).values()):
    p.print_help()
