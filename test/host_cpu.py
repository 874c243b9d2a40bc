"""Whether this machine can run code compiled for a `--target-cpu`, so that
tests for other CPUs skip (ctest 77) rather than die of SIGILL."""
import platform

# The x86-64 micro-architecture levels, by the /proc/cpuinfo flags each adds.
_LEVELS = {
    "x86-64": [],
    "x86-64-v2": ["cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"],
    "x86-64-v3": ["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"],
    "x86-64-v4": ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"],
}
_ORDER = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]


def host_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def can_run(cpu):
    """(True, "") or (False, reason). `native` and CPUs that are not an
    x86-64 level are left to kiln (native is this machine by definition)."""
    if cpu == "native" or cpu not in _LEVELS:
        return True, ""
    if platform.machine() not in ("x86_64", "AMD64"):
        return False, f"{cpu} code does not run on {platform.machine()}"
    flags = host_flags()
    need = [f for level in _ORDER[:_ORDER.index(cpu) + 1] for f in _LEVELS[level]]
    missing = [f for f in need if f not in flags]
    if missing:
        return False, f"this CPU cannot run {cpu} code (no {', '.join(missing)})"
    return True, ""
