//===- Artifacts.cpp - header, static and shared libraries ----------------===//
#include "compiler/Emit.h"

#include "kiln/model_abi.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace kiln {
namespace {

const char *cxxType(int dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT: return "float";
  case KILN_DTYPE_DOUBLE: return "double";
  case KILN_DTYPE_INT8: return "int8_t";
  case KILN_DTYPE_INT16: return "int16_t";
  case KILN_DTYPE_INT32: return "int32_t";
  case KILN_DTYPE_INT64: return "int64_t";
  case KILN_DTYPE_UINT8: return "uint8_t";
  case KILN_DTYPE_UINT16: return "uint16_t";
  case KILN_DTYPE_UINT32: return "uint32_t";
  case KILN_DTYPE_UINT64: return "uint64_t";
  case KILN_DTYPE_BOOL: return "bool";
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16: return "uint16_t";
  default: return "void";
  }
}

const char *dtypeEnum(int dtype) {
  switch (dtype) {
  case KILN_DTYPE_FLOAT: return "KILN_DTYPE_FLOAT";
  case KILN_DTYPE_DOUBLE: return "KILN_DTYPE_DOUBLE";
  case KILN_DTYPE_INT8: return "KILN_DTYPE_INT8";
  case KILN_DTYPE_INT16: return "KILN_DTYPE_INT16";
  case KILN_DTYPE_INT32: return "KILN_DTYPE_INT32";
  case KILN_DTYPE_INT64: return "KILN_DTYPE_INT64";
  case KILN_DTYPE_UINT8: return "KILN_DTYPE_UINT8";
  case KILN_DTYPE_UINT16: return "KILN_DTYPE_UINT16";
  case KILN_DTYPE_UINT32: return "KILN_DTYPE_UINT32";
  case KILN_DTYPE_UINT64: return "KILN_DTYPE_UINT64";
  case KILN_DTYPE_BOOL: return "KILN_DTYPE_BOOL";
  case KILN_DTYPE_FLOAT16: return "KILN_DTYPE_FLOAT16";
  case KILN_DTYPE_BFLOAT16: return "KILN_DTYPE_BFLOAT16";
  default: return "KILN_DTYPE_UNDEFINED";
  }
}

/// C++ identifiers for tensor names ("input.1" -> input_1), unique.
std::vector<std::string> identifiers(const ModelSignature &sig) {
  static const llvm::StringSet<> reserved = {
      "auto", "bool", "char", "class", "const", "default", "delete", "do",
      "double", "else", "enum", "float", "for", "if", "int", "long", "new",
      "operator", "private", "public", "return", "short", "signed", "static",
      "struct", "switch", "template", "this", "union", "unsigned", "void",
      "while", "session", "error", "ok", "run", "info"};
  std::vector<std::string> out;
  llvm::StringSet<> used;
  auto add = [&](const std::string &raw) {
    std::string id;
    for (char c : raw)
      id += isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (id.empty() || isdigit(static_cast<unsigned char>(id[0])))
      id = "t_" + id;
    if (reserved.contains(id))
      id += "_";
    std::string unique = id;
    for (int n = 1; used.contains(unique); ++n)
      unique = id + "_" + std::to_string(n);
    used.insert(unique);
    out.push_back(unique);
  };
  for (const auto &t : sig.inputs)
    add(t.name);
  for (const auto &t : sig.outputs)
    add(t.name);
  return out;
}

std::string shapeList(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const char *valueKindName(int kind) {
  switch (kind) {
  case KILN_VALUE_SEQUENCE:
    return "sequence of ";
  case KILN_VALUE_OPTIONAL:
    return "optional ";
  case KILN_VALUE_OPTIONAL_SEQUENCE:
    return "optional sequence of ";
  case KILN_VALUE_DYNAMIC:
    return "run-time shaped ";
  default:
    return "";
  }
}

/// What run() takes for one input or output.
const char *paramType(const TensorSignature &t) {
  return t.kind == KILN_VALUE_TENSOR ? cxxType(t.dtype) : "kiln_sequence";
}

LogicalResult writeFile(StringRef path, StringRef data) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "kiln: error: cannot write " << path << ": " << ec.message() << "\n";
    return failure();
  }
  out.os() << data;
  out.keep();
  return success();
}

/// A size program (run-time sizes) as a C++ expression of the sizes
/// run() takes; quotients call the header's kiln_floordiv & co.
std::string sizeExpr(const std::vector<int64_t> &program, const std::vector<std::string> &sizes) {
  std::vector<std::string> stack;
  for (size_t i = 0; i + 1 < program.size(); i += 2) {
    int64_t op = program[i], arg = program[i + 1];
    if (op == KILN_SIZE_CONST || op == KILN_SIZE_SYMBOL) {
      stack.push_back(op == KILN_SIZE_CONST ? std::to_string(arg) : sizes.at(arg));
      continue;
    }
    if (stack.size() < 2)
      return "";
    std::string b = stack.back();
    stack.pop_back();
    std::string a = stack.back();
    stack.pop_back();
    switch (op) {
    case KILN_SIZE_ADD:
      stack.push_back("(" + a + " + " + b + ")");
      break;
    case KILN_SIZE_MUL:
      stack.push_back(a == "1" ? b : a + " * " + b);
      break;
    case KILN_SIZE_FLOORDIV:
      stack.push_back("kiln_floordiv(" + a + ", " + b + ")");
      break;
    case KILN_SIZE_CEILDIV:
      stack.push_back("kiln_ceildiv(" + a + ", " + b + ")");
      break;
    case KILN_SIZE_MOD:
      stack.push_back("kiln_mod(" + a + ", " + b + ")");
      break;
    default:
      return "";
    }
  }
  // (A sum keeps its parentheses: num_elements_at multiplies the dims.)
  return stack.size() == 1 ? stack[0] : "";
}

/// A shape-variant tensor's dimensions as C++ expressions of the sizes
/// run() takes; "" for one kiln cannot express.
std::vector<std::string> dimExprs(const TensorSignature &t,
                                  const std::vector<std::string> &sizes) {
  std::vector<std::string> out;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    std::string e;
    if (t.shape[d] >= 0) {
      e = std::to_string(t.shape[d]);
    } else if (d < t.sizePrograms.size() && !t.sizePrograms[d].empty()) {
      e = sizeExpr(t.sizePrograms[d], sizes);
    } else if (d < t.symbolic.size() && t.symbolic[d].symbol >= 0) {
      const TensorSignature::SymbolicDim &sd = t.symbolic[d];
      e = sizes[sd.symbol];
      if (sd.scale != 1)
        e = std::to_string(sd.scale) + " * " + e;
      if (sd.offset)
        e += (sd.offset > 0 ? " + " : " - ") + std::to_string(std::abs(sd.offset));
    }
    out.push_back(e);
  }
  return out;
}

bool hasSymbolicDim(const TensorSignature &t) {
  return t.kind == KILN_VALUE_TENSOR && llvm::is_contained(t.shape, -1);
}

} // namespace

std::string generateHeader(const ModelSignature &sig) {
  std::vector<std::string> ids = identifiers(sig);
  std::string n = sig.name;
  // The sizes run() takes for a shape-variant model's symbolic dimensions.
  std::vector<std::string> sizes;
  for (const std::string &dim : sig.dimNames) {
    std::string id;
    for (char c : dim)
      id += isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (id.empty() || isdigit(static_cast<unsigned char>(id[0])))
      id = "d_" + id;
    while (llvm::is_contained(ids, id) || llvm::is_contained(sizes, id) ||  id == "in" || id == "out")
      id += "_size";
    sizes.push_back(id);
  }
  std::vector<std::string> params = sizes;
  std::string sizeArgs = llvm::join(params, ", ");
  std::string sizeParams = params.empty() ? "" : "int64_t " + llvm::join(params, ", int64_t ");
  std::string h;
  llvm::raw_string_ostream os(h);
  os << "// Generated by kiln for model \"" << n << "\". Do not edit.\n"
     << "#pragma once\n\n#include <cstdint>\n#include <kiln/kiln_rt.h>\n\n"
     << "extern \"C\" const kiln_model_info *kiln_model_" << n << "(void);\n\n"
     << "namespace kiln_models {\nnamespace " << n << " {\n\n";
  auto hasPrograms = [](const std::vector<TensorSignature> &ts) {
    return llvm::any_of(ts, [](const TensorSignature &t) {
      return llvm::any_of(t.sizePrograms, [](const auto &p) { return !p.empty(); });
    });
  };
  if (hasPrograms(sig.inputs) || hasPrograms(sig.outputs))
    os << "// Integer quotients of the shape function (floor, as the runtime's).\n"
       << "inline int64_t kiln_floordiv(int64_t a, int64_t b) {\n"
       << "  return a / b - ((a % b != 0) && ((a % b < 0) != (b < 0)));\n}\n"
       << "inline int64_t kiln_ceildiv(int64_t a, int64_t b) {\n"
       << "  return -kiln_floordiv(-a, b);\n}\n"
       << "inline int64_t kiln_mod(int64_t a, int64_t b) { return a - b * kiln_floordiv(a, b); }\n\n";
  auto describe = [&](const TensorSignature &t, const std::string &id) {
    os << "/// " << (&t >= &sig.outputs.front() && !sig.outputs.empty() &&
                             &t <= &sig.outputs.back()
                         ? "Output"
                         : "Input")
       << " \"" << t.name << "\": " << valueKindName(t.kind) << cxxType(t.dtype) << "["
       << (t.ranked ? shapeList(t.shape) : "...") << "]\n"
       << "struct " << id << "_t {\n"
       << "  using element_type = " << cxxType(t.dtype) << ";\n"
       << "  static constexpr const char *name = \"" << t.name << "\";\n"
       << "  static constexpr kiln_dtype dtype = " << dtypeEnum(t.dtype) << ";\n"
       << "  static constexpr int rank = " << (t.ranked ? (int)t.shape.size() : -1) << ";\n";
    if (!t.shape.empty())
      os << "  static constexpr int64_t shape[" << t.shape.size() << "] = {"
         << shapeList(t.shape) << "};\n";
    if (hasSymbolicDim(t)) {
      std::vector<std::string> exprs = dimExprs(t, sizes);
      if (sig.runtimeSizes)
        os << "  /// -1 in shape: a symbolic dimension (" << llvm::join(sig.dimNames, ", ")
           << "), any size at run time.\n";
      else
        os << "  /// -1 in shape: a symbolic dimension (" << llvm::join(sig.dimNames, ", ")
           << "), compiled for the sizes listed at compile time.\n";
      if (!llvm::is_contained(exprs, "")) {
        os << "  static void shape_at(" << sizeParams << ", int64_t *shape) {\n";
        for (size_t d = 0; d < exprs.size(); ++d)
          os << "    shape[" << d << "] = " << exprs[d] << ";\n";
        os << "  }\n  static int64_t num_elements_at(" << sizeParams << ") {\n    return "
           << llvm::join(exprs, " * ") << ";\n  }\n";
      } else {
        os << "  /// kiln cannot tell this shape from the sizes: kiln_model_select gives it.\n"
           << "  static constexpr bool shape_known = false;\n";
      }
    } else if (t.kind == KILN_VALUE_TENSOR)
      os << "  static constexpr int64_t num_elements = " << numElements(t.shape) << ";\n";
    else
      os << "  /// A kiln_sequence (KILN_VALUE_*); dtype, rank and shape describe its\n"
         << "  /// elements (-1: known at run time only).\n"
         << "  static constexpr int kind = " << t.kind << ";\n";
    os << "};\n\n";
  };
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    describe(sig.inputs[i], ids[i]);
  for (size_t i = 0; i < sig.outputs.size(); ++i)
    describe(sig.outputs[i], ids[sig.inputs.size() + i]);
  if (sig.runtimeSizes)
    os << "/// Compiled once for every size of " << llvm::join(sig.dimNames, ", ")
       << " (run-time sizes): run() takes the sizes;\n"
       << "/// each output's shape_at() is the model's shape function.\n"
       << "constexpr bool runtime_sizes = true;\n";
  else if (!sizes.empty())
    os << "/// Compiled once per listed size of " << llvm::join(sig.dimNames, ", ")
       << " (kiln compile --dim-values): run() takes the sizes, and the runtime\n"
       << "/// picks the variant compiled for them.\n"
       << "constexpr bool shape_variants = true;\n";
  os << "constexpr int num_inputs = " << sig.inputs.size() << ";\n"
     << "constexpr int num_outputs = " << sig.outputs.size() << ";\n\n"
     << "inline const kiln_model_info *info() { return kiln_model_" << n
     << "(); }\n\n"
     << "/// One session of the model: owns its arena; use one per thread.\n"
     << "class Model {\npublic:\n"
     << "  /// num_threads: threads for the model's parallel loops (0: the\n"
     << "  /// runtime's default, the machine's physical cores or\n"
     << "  /// $KILN_NUM_THREADS; 1: the calling thread alone).\n"
     << "  explicit Model(int num_threads = 0) {\n"
     << "    kiln_session_options options{};\n"
     << "    options.num_threads = num_threads;\n"
     << "    status_ = kiln_session_create_with_options(info(), &options, "
        "&session_);\n"
     << "  }\n"
     << "  ~Model() { kiln_session_destroy(session_); }\n"
     << "  Model(const Model &) = delete;\n"
     << "  Model &operator=(const Model &) = delete;\n\n"
     << "  bool ok() const { return status_ == KILN_OK; }\n"
     << "  kiln_status status() const { return status_; }\n"
     << "  const char *error() const {\n"
     << "    return session_ ? kiln_session_error(session_) : "
        "kiln_last_error();\n  }\n"
     << "  kiln_session *session() { return session_; }\n\n";
  auto tensors = [&](const char *var, const std::vector<TensorSignature> &ts,
                     size_t idOffset, bool isConst) {
    auto known = [&](size_t i) { return !llvm::is_contained(dimExprs(ts[i], sizes), ""); };
    for (size_t i = 0; i < ts.size(); ++i)
      if (hasSymbolicDim(ts[i])) {
        const std::string &id = ids[idOffset + i];
        if (known(i))
          os << "    int64_t " << id << "_shape[" << ts[i].shape.size() << "];\n"
             << "    " << id << "_t::shape_at(" << sizeArgs << ", " << id << "_shape);\n";
      }
    os << "    kiln_tensor " << var << "[" << std::max<size_t>(ts.size(), 1) << "] = {";
    for (size_t i = 0; i < ts.size(); ++i) {
      const std::string &id = ids[idOffset + i];
      std::string shape = ts[i].shape.empty()                 ? "nullptr"
                          : hasSymbolicDim(ts[i])                ? id + "_shape"
                                                                : id + "_t::shape";
      if (ts[i].kind != KILN_VALUE_TENSOR) {
        os << (i ? ", " : "") << "\n        {" << id << "_t::name, " << id
           << "_t::dtype, 0, nullptr, const_cast<kiln_sequence *>(" << id << "), 0}";
        continue;
      }
      std::string data =
          isConst ? "const_cast<" + std::string(cxxType(ts[i].dtype)) + " *>(" + id + ")" : id;
      // An output whose shape kiln cannot express: the caller sized it from
      // kiln_model_select, and the runtime checks nothing of it.
      if (hasSymbolicDim(ts[i]) && !known(i)) {
        os << (i ? ", " : "") << "\n        {" << id << "_t::name, " << id
           << "_t::dtype, 0, nullptr, " << data << ", UINT64_MAX}";
        continue;
      }
      std::string count = hasSymbolicDim(ts[i])
                               ? id + "_t::num_elements_at(" + sizeArgs + ")"
                               : id + "_t::num_elements";
      os << (i ? ", " : "") << "\n        {" << id << "_t::name, " << id << "_t::dtype, "
         << id << "_t::rank, " << shape << ", " << data << ", " << count << " * sizeof("
         << cxxType(ts[i].dtype) << ")}";
    }
    os << "};\n";
  };
  // run() on host buffers; run_device() on device pointers (a CUDA session
  // of a model built with --providers=cuda,...; else KILN_ERROR_PROVIDER).
  for (bool device : {false, true}) {
    os << "  /// Runs on " << (device ? "device pointers" : "host buffers")
       << " (dense, row-major).\n"
       << "  kiln_status " << (device ? "run_device(" : "run(")
       << (sizeParams.empty() ? "" : sizeParams + ", ");
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      os << (i ? ", " : "") << "const " << paramType(sig.inputs[i]) << " *" << ids[i];
    for (size_t i = 0; i < sig.outputs.size(); ++i)
      os << (i || !sig.inputs.empty() ? ", " : "") << paramType(sig.outputs[i]) << " *"
         << ids[sig.inputs.size() + i];
    os << ") {\n    if (!session_)\n      return status_;\n";
    tensors("in", sig.inputs, 0, true);
    tensors("out", sig.outputs, sig.inputs.size(), false);
    os << "    return " << (device ? "kiln_session_run_device" : "kiln_session_run")
       << "(session_, in, " << sig.inputs.size() << ", out, " << sig.outputs.size()
       << ");\n  }\n\n";
  }
  os << "private:\n  kiln_session *session_ = nullptr;\n  kiln_status status_ = KILN_OK;\n"
     << "};\n\n} // namespace " << n << "\n} // namespace kiln_models\n";
  return h;
}

LogicalResult writeArtifacts(StringRef object, const ModelSignature &sig,
                             StringRef prefix, bool sharedLibrary) {
  SmallString<256> dir = llvm::sys::path::parent_path(prefix);
  if (!dir.empty())
    if (auto ec = llvm::sys::fs::create_directories(dir)) {
      llvm::errs() << "kiln: error: cannot create " << dir << ": " << ec.message() << "\n";
      return failure();
    }
  auto inDir = [&](const std::string &file) {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, file);
    return std::string(p);
  };
  std::string objPath = (prefix + ".o").str();
  std::string libPath = inDir("lib" + sig.name + ".a");
  std::string soPath = inDir("lib" + sig.name + ".so");
  std::string headerPath = inDir(sig.name + ".h");
  if (failed(writeFile(objPath, object)) ||
      failed(writeFile(headerPath, generateHeader(sig))))
    return failure();

  auto member = llvm::NewArchiveMember::getFile(objPath, /*Deterministic=*/true);
  if (!member) {
    llvm::errs() << "kiln: error: " << llvm::toString(member.takeError()) << "\n";
    return failure();
  }
  member->MemberName = llvm::sys::path::filename(objPath);
  std::vector<llvm::NewArchiveMember> members;
  members.push_back(std::move(*member));
  if (auto err = llvm::writeArchive(libPath, members, llvm::SymtabWritingMode::NormalSymtab,
                                    llvm::object::Archive::K_GNU,
                                    /*Deterministic=*/true, /*Thin=*/false)) {
    llvm::errs() << "kiln: error: cannot write " << libPath << ": "
                 << llvm::toString(std::move(err)) << "\n";
    return failure();
  }
  if (!sharedLibrary)
    return success();

  // The shared library only needs libm; link it with the system driver.
  std::string driver;
  const char *fromEnv = getenv("KILN_CC");
  for (const char *candidate : {fromEnv, "cc", "clang-19", "gcc", "clang"}) {
    if (!candidate || !*candidate)
      continue;
    if (auto found = llvm::sys::findProgramByName(candidate)) {
      driver = *found;
      break;
    }
  }
  if (driver.empty()) {
    llvm::errs() << "kiln: error: no C compiler driver (cc) found to link " << soPath
                 << "; set KILN_CC\n";
    return failure();
  }
  SmallVector<StringRef> args = {driver, "-shared", "-o", soPath, objPath, "-lm",
                                 "-Wl,-z,noexecstack"};
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(driver, args, std::nullopt, {}, 0, 0, &errMsg);
  if (rc != 0) {
    llvm::errs() << "kiln: error: linking " << soPath << " failed (" << driver << ", rc "
                 << rc << ") " << errMsg << "\n";
    return failure();
  }
  return success();
}

} // namespace kiln
