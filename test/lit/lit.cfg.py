# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "KILN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "split_ptx.py"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)
# "=" and "(" are excluded before a tool name so that `--emit=kiln` and
# `provider("kiln")`-like text in RUN lines stay as written.
from lit.llvm.subst import ToolSubst
llvm_config.add_tool_substitutions(
    [ToolSubst(t, pre=r".-^/\<=(\"") for t in ["kiln", "kiln-opt", "kiln-run"]],
    [config.kiln_tools_dir])
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%kiln_src", config.kiln_src_root))
config.substitutions.append(
    ("%cxx", (config.cxx_compiler + " " + getattr(config, "cxx_flags", "")).strip()))
config.substitutions.append(("%kiln_rt_include", os.path.join(config.kiln_src_root, "runtime", "include")))
config.substitutions.append(("%kiln_lib", os.path.join(config.kiln_obj_root, "lib")))

# Tests that build ONNX files need the onnx Python package.
try:
    import importlib.util
    import subprocess
    if subprocess.run([config.python_executable, "-c", "import onnx"],
                      capture_output=True).returncode == 0:
        config.available_features.add("onnx")
except Exception:
    pass

# ptxas validates the PTX that CUDA partitions compile to.
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", "/usr/local/cuda/bin/ptxas"))
