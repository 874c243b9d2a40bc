//===- OnnxOpVersions.h - known ONNX schema revisions -----------*- C++ -*-===//
//
// Which ops and schema revisions (since_versions) of the ONNX domains
// (default, ai.onnx.ml, ai.onnx.preview.training) kiln knows; the importer rejects anything else. Data is generated into
// OnnxOpVersions.inc together with OnnxOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_ONNX_ONNXOPVERSIONS_H
#define KILN_DIALECTS_ONNX_ONNXOPVERSIONS_H

#include <algorithm>
#include <cstring>
#include <iterator>

namespace kiln::onnx {

#include "dialects/onnx/OnnxOpVersions.inc"

/// The version table entry of `opType`, or nullptr if kiln has no such op.
inline const OnnxOpVersionInfo *lookupOnnxOpVersions(const char *opType) {
  const OnnxOpVersionInfo *begin = std::begin(kOnnxOpVersions);
  const OnnxOpVersionInfo *end = std::end(kOnnxOpVersions);
  const OnnxOpVersionInfo *it =
      std::lower_bound(begin, end, opType, [](const auto &e, const char *n) {
        return std::strcmp(e.name, n) < 0;
      });
  return (it != end && std::strcmp(it->name, opType) == 0) ? it : nullptr;
}

/// The domain entry of `name` ("" for the default domain), or nullptr if
/// kiln does not import that domain.
inline const OnnxDomainInfo *lookupOnnxDomain(const char *name) {
  for (const OnnxDomainInfo &d : kOnnxDomains)
    if (std::strcmp(d.name, name) == 0)
      return &d;
  return nullptr;
}

/// The since_version of the schema revision that applies to `opType` in a
/// model importing the op's domain at `opset`: the largest since_version
/// <= opset. Returns -1 for unknown ops, opsets above the domain's newest,
/// or opsets older than the op.
inline int getOnnxSchemaVersion(const char *opType, int opset) {
  const OnnxOpVersionInfo *info = lookupOnnxOpVersions(opType);
  const OnnxDomainInfo *domain = info ? lookupOnnxDomain(info->domain) : nullptr;
  if (!domain || opset > domain->maxOpset)
    return -1;
  int found = -1;
  for (int i = 0; i < info->numSinceVersions; ++i)
    if (info->sinceVersions[i] <= opset)
      found = info->sinceVersions[i];
  return found;
}

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_ONNXOPVERSIONS_H
