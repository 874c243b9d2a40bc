#!/usr/bin/env python3
"""Generates OnnxOps.td and OnnxOpVersions.inc from the installed ONNX schemas.

Run by hand (or `ninja kiln-gen-onnx-ops`) after upgrading the `onnx` pip
package; the outputs are committed so normal builds do not need Python onnx.

  python3 dialects/onnx/gen_onnx_ops.py [--out-dir dialects/onnx]
"""

import argparse
import collections
import os
import re

import numpy
import onnx
from onnx import defs

# The domains kiln imports: the default one, the classical-ML one, the
# training preview (optimizers) and the preview (FlexAttention). Op names do not clash across them (checked).
DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")

# Ops whose results depend on hidden state (RNG); they must not be CSE'd or
# hoisted, so they get no `Pure`. Dropout is random when training_mode=1.
NON_PURE_OPS = {
    "Bernoulli",
    "Dropout",
    "Multinomial",
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
}

# ONNX tensor element type -> ODS type constraint. float4e2m1 and
# float8e8m0, which MLIR 19 lacks, are onnx dialect types; types absent here
# (float6*) are dropped from constraints.
ELEMENT_TYPES = {
    "float": "F32",
    "double": "F64",
    "float16": "F16",
    "bfloat16": "BF16",
    "int8": "I8",
    "int16": "I16",
    "int32": "I32",
    "int64": "I64",
    "uint8": "UI8",
    "uint16": "UI16",
    "uint32": "UI32",
    "uint64": "UI64",
    "bool": "I1",
    "string": "ONNX_StringType",
    "complex64": "Complex<F32>",
    "complex128": "Complex<F64>",
    "float8e4m3fn": "F8E4M3FN",
    "float8e4m3fnuz": "F8E4M3FNUZ",
    "float8e5m2": "F8E5M2",
    "float8e5m2fnuz": "F8E5M2FNUZ",
    "int4": "I<4>",
    "uint4": "UI<4>",
    "int2": "I<2>",
    "uint2": "UI<2>",
    "float4e2m1": "ONNX_Float4E2M1Type",
    "float8e8m0": "ONNX_Float8E8M0Type",
}
# Deterministic order inside TensorOf<[...]> (independent of schema order).
ELEMENT_ORDER = list(ELEMENT_TYPES)

ATTR_TYPES = {
    "INT": "I64Attr",
    "FLOAT": "F32Attr",
    "STRING": "StrAttr",
    "INTS": "I64ArrayAttr",
    "FLOATS": "F32ArrayAttr",
    "STRINGS": "StrArrayAttr",
    "TENSOR": "ElementsAttr",
    "SPARSE_TENSOR": "ElementsAttr",
    "TYPE_PROTO": "TypeAttr",
    "TYPE_PROTOS": "TypeArrayAttr",
}
REGION_ATTRS = {"GRAPH": "AnyRegion", "GRAPHS": "VariadicRegion<AnyRegion>"}

# Operand/result names whose ODS accessors would collide with methods every
# op already has (or that are C++ keywords); such names get a suffix.
RESERVED_VALUE_NAMES = {
    "operands", "results", "operation", "type", "context", "loc", "name",
    "attributes", "properties", "regions", "region", "operand", "result",
    "body", "default", "delete", "new", "operator", "template", "this",
    "class", "struct", "int", "float", "double", "bool", "char", "auto",
    "register", "union", "namespace", "const", "static", "return",
}

INT_MAX = 2147483647


def camel(name):
    # Mirrors llvm::convertToCamelFromSnakeCase(name, /*capitalizeFirst=*/true).
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def sanitize(name):
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not name or name[0].isdigit():
        name = "v_" + name
    return name


def latest_schemas():
    by_name = collections.defaultdict(list)
    for s in defs.get_all_schemas_with_history():
        if s.domain in DOMAINS:
            by_name[s.name].append(s)
    for n, v in by_name.items():
        if len({s.domain for s in v}) != 1:
            raise SystemExit("op %s is in several domains" % n)
    return {
        n: sorted(v, key=lambda s: s.since_version) for n, v in by_name.items()
    }


def domain_max_opsets():
    """The newest opset of each domain, from onnx's release table (the last
    row: release, IR, ai.onnx, ai.onnx.ml, ai.onnx.training)."""
    latest = onnx.helper.VERSION_TABLE[-1]
    preview = max((s.since_version for s in defs.get_all_schemas_with_history()
                   if s.domain == "ai.onnx.preview"), default=1)
    return {"": defs.onnx_opset_version(), "ai.onnx.ml": latest[3],
            "ai.onnx.preview.training": latest[4], "ai.onnx.preview": preview}


def tensor_constraint(type_strs):
    """Maps a list of ONNX type strings to an ODS type constraint."""
    if any(not t.startswith("tensor(") for t in type_strs):
        return "AnyType"  # seq/optional/map/sparse_tensor values
    elems = {t[len("tensor("):-1] for t in type_strs}
    mapped = [ELEMENT_TYPES[e] for e in ELEMENT_ORDER if e in elems]
    if not mapped:
        return "AnyTensor"
    return "TensorOf<[" + ", ".join(mapped) + "]>"


def value_constraint(schema, param):
    constraints = {tc.type_param_str: tc for tc in schema.type_constraints}
    if param.type_str in constraints:
        base = tensor_constraint(constraints[param.type_str].allowed_type_strs)
    else:
        base = tensor_constraint([param.type_str])
    opt = param.option.name
    if opt == "Optional":
        if base != "AnyType":
            base = "AnyTypeOf<[" + base + ", NoneType]>"
    elif opt == "Variadic":
        base = "Variadic<" + base + ">"
    return base


def fmt_float(v):
    # Shortest decimal that round-trips through float32 (1e-05, not
    # 9.999999747378752e-06): ONNX stores float attributes as float32.
    r = str(numpy.float32(v))
    if r in ("inf", "-inf", "nan"):
        raise ValueError("non-finite float default")
    if "e" not in r and "." not in r:
        r += ".0"
    return r


def cxx_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def td_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def attr_constraint(attr):
    kind = attr.type.name
    base = ATTR_TYPES[kind]
    if attr.required:
        return base
    dv = attr.default_value
    if dv.type == 0:  # AttributeProto.UNDEFINED: no default
        return "OptionalAttr<%s>" % base
    if kind == "INT":
        return 'DefaultValuedAttr<%s, "%d">' % (base, dv.i)
    if kind == "FLOAT":
        return 'DefaultValuedAttr<%s, "%s">' % (base, fmt_float(dv.f))
    if kind == "STRING":
        return "DefaultValuedStrAttr<%s, %s>" % (
            base, td_str(dv.s.decode("utf-8")))
    if kind == "INTS":
        val = "{" + ", ".join(str(i) for i in dv.ints) + "}"
        return "DefaultValuedAttr<%s, %s>" % (base, td_str(val))
    if kind == "FLOATS":
        val = "{" + ", ".join(fmt_float(f) + "f" for f in dv.floats) + "}"
        return "DefaultValuedAttr<%s, %s>" % (base, td_str(val))
    if kind == "STRINGS":
        val = "{" + ", ".join(cxx_str(s.decode("utf-8")) for s in dv.strings) + "}"
        return "DefaultValuedAttr<%s, %s>" % (base, td_str(val))
    raise ValueError("unsupported default for %s (%s)" % (attr.name, kind))


def doc_text(schema):
    doc = (schema.doc or "").strip()
    if schema.deprecated:
        doc = "Deprecated in ONNX. " + doc
    return doc


def summary(schema):
    doc = doc_text(schema)
    para = re.split(r"\n\s*\n", doc)[0] if doc else ""
    para = " ".join(para.split())
    m = re.search(r"(?<=[.!?])\s", para)
    first = para[: m.start()] if m else para
    if len(first) > 200:
        first = first[:197].rstrip() + "..."
    return first or ("ONNX " + schema.name + " operator")


def td_code_block(text):
    # `}]` ends a TableGen code block; nothing else needs escaping.
    return text.replace("}]", "} ]")


def param_kind(param):
    return {"Single": "Single", "Optional": "Optional",
            "Variadic": "Variadic"}[param.option.name]


def gen_op(schema, versions):
    name = schema.name
    used = set(camel(a) for a in schema.attributes)
    regions = [a for a in schema.attributes.values()
               if a.type.name in REGION_ATTRS]
    attrs = [a for a in schema.attributes.values()
             if a.type.name not in REGION_ATTRS]

    def value_name(pname):
        n = sanitize(pname)
        while n.lower() in RESERVED_VALUE_NAMES or camel(n) in used:
            n += "_"
        used.add(camel(n))
        return n

    ins = [(value_name(p.name), p) for p in schema.inputs]
    outs = [(value_name(p.name), p) for p in schema.outputs]

    traits = []
    if regions:
        traits.append("RecursiveMemoryEffects")
    elif name not in NON_PURE_OPS:
        traits.append("Pure")
    traits.append("ONNX_ShapeInferenceOpInterface")

    lines = []
    lines.append('def ONNX_%sOp : ONNX_Op<"%s", [%s]> {' % (
        name, name, ", ".join(traits)))
    lines.append("  let summary = %s;" % td_str(summary(schema)))
    lines.append("  let description = [{")
    lines.append(td_code_block(doc_text(schema)))
    lines.append("  }];")

    args = ["%s:$%s" % (value_constraint(schema, p), n) for n, p in ins]
    args += ["%s:$%s" % (attr_constraint(a), a.name)
             for a in sorted(attrs, key=lambda a: a.name)]
    lines.append("  let arguments = (ins" + "".join(
        ("\n    " + a + ("," if i + 1 < len(args) else ""))
        for i, a in enumerate(args)) + ");")
    res = ["%s:$%s" % (value_constraint(schema, p), n) for n, p in outs]
    lines.append("  let results = (outs" + "".join(
        ("\n    " + r + ("," if i + 1 < len(res) else ""))
        for i, r in enumerate(res)) + ");")
    if regions:
        regs = ["%s:$%s" % (REGION_ATTRS[a.type.name], a.name)
                for a in sorted(regions, key=lambda a: a.name)]
        lines.append("  let regions = (region " + ", ".join(regs) + ");")
        lines.append("  let assemblyFormat = \"`(` operands `)` regions "
                     "attr-dict-with-keyword `:` "
                     "functional-type(operands, results)\";")
    else:
        lines.append("  let assemblyFormat = \"`(` operands `)` attr-dict "
                     "`:` functional-type(operands, results)\";")
    lines.append("  let hasVerifier = 1;")

    # Schema facts for the shared verifier; names are the ONNX ones.
    def param_infos(params):
        if not params:
            return "{}"
        items = []
        for _, p in params:
            tv = p.type_str if not p.type_str.startswith(
                ("tensor(", "seq(", "optional(", "map(", "sparse_tensor(")) \
                else None
            items.append("{%s, %s, ::kiln::onnx::OnnxParamKind::%s, %s, %d}" % (
                cxx_str(p.name), cxx_str(tv) if tv else "nullptr",
                param_kind(p), "true" if p.is_homogeneous else "false",
                p.min_arity))
        return "{\n      " + ",\n      ".join(items) + "}"

    lines.append("  let extraClassDeclaration = [{")
    lines.append("    static constexpr ::llvm::StringLiteral kOnnxName = %s;"
                 % cxx_str(name))
    lines.append("    static constexpr int kSinceVersion = %d;"
                 % schema.since_version)
    lines.append("    /// Arity and type-variable facts from the ONNX schema.")
    lines.append("    static const ::kiln::onnx::OnnxSchemaInfo &getOnnxSchema();")
    lines.append("  }];")
    lines.append("  let extraClassDefinition = [{")
    lines.append("    const ::kiln::onnx::OnnxSchemaInfo &$cppClass::getOnnxSchema() {")
    lines.append("      static constexpr ::kiln::onnx::OnnxParamInfo kInputs[] = %s;"
                 % param_infos(ins) if ins else "")
    lines.append("      static constexpr ::kiln::onnx::OnnxParamInfo kOutputs[] = %s;"
                 % param_infos(outs) if outs else "")
    lines.append("      static const ::kiln::onnx::OnnxSchemaInfo kInfo{%s, %d, %s, %s, %d, %d, %d, %d};" % (
        cxx_str(name), schema.since_version,
        "kInputs" if ins else "{}", "kOutputs" if outs else "{}",
        schema.min_input, min(schema.max_input, INT_MAX),
        schema.min_output, min(schema.max_output, INT_MAX)))
    lines.append("      return kInfo;")
    lines.append("    }")
    lines.append("    ::mlir::LogicalResult $cppClass::verify() {")
    lines.append("      return ::kiln::onnx::verifyOnnxSchema(getOperation(), getOnnxSchema());")
    lines.append("    }")
    lines.append("  }];")
    lines.append("}")
    return "\n".join(l for l in lines if l != "")


def output_type_facts(schema):
    """Per output: index of the input bound to the same type variable (-1
    if none) and the single TensorProto dtype its constraint allows (0 if
    several)."""
    constraints = {c.type_param_str: c.allowed_type_strs
                   for c in schema.type_constraints}
    src, fixed = [], []
    for out in schema.outputs:
        idx = next((i for i, inp in enumerate(schema.inputs)
                    if inp.type_str == out.type_str), -1)
        src.append(idx)
        allowed = constraints.get(out.type_str, [out.type_str])
        dtype = 0
        if len(allowed) == 1 and allowed[0].startswith("tensor("):
            elem = allowed[0][len("tensor("):-1]
            dtype = onnx.helper.np_dtype_to_tensor_dtype(
                numpy.dtype("bool" if elem == "bool" else
                            {"float": "float32", "double": "float64",
                             "float16": "float16"}.get(elem, elem))) \
                if elem in ("float", "double", "float16", "bool", "int8", "int16",
                            "int32", "int64", "uint8", "uint16", "uint32",
                            "uint64") else 0
        fixed.append(int(dtype))
    return src, fixed


HEADER = """\
//===- {file} - generated from ONNX {ver} schemas --------*- {lang} -*-===//
//
// GENERATED by dialects/onnx/gen_onnx_ops.py; do not edit. Regenerate with
// `ninja kiln-gen-onnx-ops` (or run the script) after upgrading onnx.
//
//===----------------------------------------------------------------------===//
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()

    schemas = latest_schemas()
    max_opset = defs.onnx_opset_version()

    td = [HEADER.format(file="OnnxOps.td", ver=onnx.__version__, lang="tablegen")]
    td.append("#ifndef KILN_ONNX_OPS_TD\n#define KILN_ONNX_OPS_TD\n")
    td.append('include "dialects/onnx/OnnxBase.td"')
    td.append('include "dialects/onnx/ShapeInferenceInterface.td"\n')
    for name in sorted(schemas):
        versions = schemas[name]
        td.append(gen_op(versions[-1], versions))
        td.append("")
    td.append("#endif // KILN_ONNX_OPS_TD")
    with open(os.path.join(args.out_dir, "OnnxOps.td"), "w") as f:
        f.write("\n".join(td) + "\n")

    inc = [HEADER.format(file="OnnxOpVersions.inc", ver=onnx.__version__, lang="C++")]
    inc.append("// Plain C++ (no LLVM types) so any target can include it; include it once\n"
               "// inside the namespace that should own the table (OnnxOpVersions.h does).\n")
    inc.append("constexpr int kMaxOnnxOpset = %d;\n" % max_opset)
    inc.append("struct OnnxOpVersionInfo {\n"
               "  const char *name;\n"
               "  // Ascending since_versions of every schema revision of the op.\n"
               "  const int *sinceVersions;\n"
               "  int numSinceVersions;\n"
               "  // Signature of the newest revision, for the importer.\n"
               "  int numInputs, minInputs;\n"
               "  bool variadicInput;\n"
               "  int numOutputs;\n"
               "  bool variadicOutput;\n"
               "  // Per output: the input sharing its type variable, or -1.\n"
               "  const int *outputTypeSource;\n"
               "  // Per output: the TensorProto dtype if only one is allowed, else 0.\n"
               "  const int *outputFixedDtype;\n"
               "  // \"\" for the default domain, else e.g. \"ai.onnx.ml\".\n"
               "  const char *domain;\n"
               "  // Graph attributes (regions), in ODS (name) order.\n"
               "  const char *const *regionNames;\n"
               "  int numRegions;\n"
               "};\n")
    inc.append("struct OnnxDomainInfo {\n  const char *name;\n  int maxOpset;\n};")
    inc.append("inline constexpr OnnxDomainInfo kOnnxDomains[] = {")
    for d, v in domain_max_opsets().items():
        inc.append('    {"%s", %d},' % (d, v))
    inc.append("};\n")
    for name in sorted(schemas):
        vs = ", ".join(str(s.since_version) for s in schemas[name])
        inc.append("inline constexpr int kOnnxSince_%s[] = {%s};" % (name, vs))
        src, fixed = output_type_facts(schemas[name][-1])
        inc.append("inline constexpr int kOnnxOutSrc_%s[] = {%s};" % (name, ", ".join(map(str, src)) or "-1"))
        inc.append("inline constexpr int kOnnxOutDtype_%s[] = {%s};" % (name, ", ".join(map(str, fixed)) or "0"))
        regs = sorted(a.name for a in schemas[name][-1].attributes.values()
                      if a.type.name in REGION_ATTRS)
        inc.append("inline constexpr const char *kOnnxRegions_%s[] = {%s};" % (
            name, ", ".join('"%s"' % r for r in regs) or "nullptr"))
    inc.append("\n// Sorted by name (strcmp order) for binary search.")
    inc.append("inline constexpr OnnxOpVersionInfo kOnnxOpVersions[] = {")
    for name in sorted(schemas):
        sc = schemas[name][-1]
        var_in = bool(sc.inputs) and param_kind(sc.inputs[-1]) == "Variadic"
        var_out = bool(sc.outputs) and param_kind(sc.outputs[-1]) == "Variadic"
        inc.append('    {"%s", kOnnxSince_%s, %d, %d, %d, %s, %d, %s, kOnnxOutSrc_%s, kOnnxOutDtype_%s, "%s", kOnnxRegions_%s, %d},' % (
            name, name, len(schemas[name]), len(sc.inputs), sc.min_input,
            "true" if var_in else "false", len(sc.outputs),
            "true" if var_out else "false", name, name, sc.domain, name,
            sum(1 for a in sc.attributes.values() if a.type.name in REGION_ATTRS)))
    inc.append("};")
    with open(os.path.join(args.out_dir, "OnnxOpVersions.inc"), "w") as f:
        f.write("\n".join(inc) + "\n")


if __name__ == "__main__":
    main()
