//===- Report.h - counters for `kiln compile --report` ----------*- C++ -*-===//
//
// Graph passes record what they did as integer module attributes
// `kiln.report.<name>`; the driver prints them. Header-only so that passes/
// and providers/ can both use it without a link dependency.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_KILN_REPORT_H
#define KILN_DIALECTS_KILN_REPORT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/Twine.h"

namespace kiln {

inline constexpr const char *kReportPrefix = "kiln.report.";

/// Adds `count` to the module's `kiln.report.<name>` counter.
inline void addReportCount(mlir::ModuleOp module, llvm::StringRef name,
                           int64_t count) {
  if (!module || count == 0)
    return;
  std::string key = (llvm::Twine(kReportPrefix) + name).str();
  int64_t old = 0;
  if (auto a = module->getAttrOfType<mlir::IntegerAttr>(key))
    old = a.getInt();
  mlir::Builder b(module.getContext());
  module->setAttr(key, b.getI64IntegerAttr(old + count));
}

} // namespace kiln

#endif
