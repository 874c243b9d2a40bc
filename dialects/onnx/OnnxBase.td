//===- OnnxBase.td - onnx dialect, types and helper ops ----*- tablegen -*-===//
//
// The `onnx` dialect mirrors ONNX operators one-to-one (see OnnxOps.td, which
// is generated). This file holds the hand-written parts: the dialect, its
// String element type, and the two structural ops the importer needs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ONNX_BASE_TD
#define KILN_ONNX_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def ONNX_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::kiln::onnx";
  let summary = "ONNX operators as MLIR operations";
  let description = [{
    One op per ONNX operator of the default domain, modelled after the latest
    schema revision. Optional inputs/outputs that are absent in the model are
    values of type `none` (produced by `onnx.NoValue`); graph attributes are
    regions terminated by `onnx.Yield`.
  }];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

class ONNX_Op<string mnemonic, list<Trait> traits = []>
    : Op<ONNX_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// ONNX tensor(string) elements; builtin MLIR has no string element type.
def ONNX_StringType : TypeDef<ONNX_Dialect, "String"> {
  let mnemonic = "String";
  let summary = "ONNX string tensor element type";
}

// ONNX float4e2m1 and float8e8m0, which builtin MLIR 19 lacks. They only
// cross Cast/CastLike and data movement; the CPU provider stores them as i8
// (one element per byte in the ABI).
def ONNX_Float4E2M1Type : TypeDef<ONNX_Dialect, "Float4E2M1"> {
  let mnemonic = "f4E2M1FN";
  let summary = "ONNX float4e2m1 element type (1 sign, 2 exponent, 1 mantissa bit)";
}
def ONNX_Float8E8M0Type : TypeDef<ONNX_Dialect, "Float8E8M0"> {
  let mnemonic = "f8E8M0FNU";
  let summary = "ONNX float8e8m0 element type (a power of two, 0xFF is NaN)";
}

// ONNX seq(T) and optional(T) values. They live as runtime objects
// (kiln_sequence in kiln_rt.h): CPU lowering passes them as i64 handles.
def ONNX_SeqType : TypeDef<ONNX_Dialect, "Seq"> {
  let mnemonic = "seq";
  let summary = "ONNX sequence of tensors";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}
def ONNX_OptType : TypeDef<ONNX_Dialect, "Opt"> {
  let mnemonic = "opt";
  let summary = "ONNX optional value (a tensor or a sequence, or none)";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

def ONNX_NoValueOp : ONNX_Op<"NoValue", [Pure, ConstantLike]> {
  let summary = "Placeholder for an absent optional input";
  let description = [{
    ONNX lets optional inputs be omitted anywhere in the input list (empty
    name). Every generated op keeps one operand per schema input, so an absent
    one is passed the `none` result of this op.

    ```mlir
    %none = onnx.NoValue
    %y = onnx.Conv(%x, %w, %none) : (...) -> ...
    ```
  }];
  let results = (outs NoneType:$none_val);
  let assemblyFormat = "attr-dict";
  // ConstantLike ops must fold to an attribute (the greedy driver relies on
  // it to unique constants); `unit` stands for "no value".
  let hasFolder = 1;
  let builders = [OpBuilder<(ins), [{
    build($_builder, $_state, $_builder.getNoneType());
  }]>];
}

def ONNX_YieldOp : ONNX_Op<"Yield", [Pure, Terminator, ReturnLike]> {
  let summary = "Terminator of ONNX subgraph regions";
  let description = [{
    Returns the subgraph outputs (in ONNX graph output order) from the region
    of a graph attribute, e.g. the `then_branch` of `onnx.If` or the `body`
    of `onnx.Loop`.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

#endif // KILN_ONNX_BASE_TD
