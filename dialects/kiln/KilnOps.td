//===- KilnOps.td - kiln execution dialect ------------------*- tablegen -*-===//
//
// The execution dialect: where each part of the graph runs, and the copies
// between providers. Deliberately small.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_OPS
#define KILN_DIALECT_KILN_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Execution partitions and transfers between providers";
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

def Kiln_PartitionOp : Kiln_Op<"partition", [
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "A group of ops that one execution provider runs";
  let description = [{
    Holds a connected group of ops assigned to the provider named by
    `provider`. Values defined above may be used inside; the results are
    the values yielded by the terminator. `sym_name` names the partition in
    the compiled model's descriptor and in profiles.

    ```mlir
    %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<1x10xf32> {
      %1 = onnx.Relu(%x) ...
      kiln.yield %1 : tensor<1x10xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$sym_name, StrAttr:$provider);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `provider` `(` $provider `)` (`->` type($results)^)? $body attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of non-terminator ops in the body.
    int64_t getNumBodyOps();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"PartitionOp">]> {
  let summary = "Yields the results of a partition";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* empty */ }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Kiln_TransferOp : Kiln_Op<"transfer", [Pure, SameOperandsAndResultType]> {
  let summary = "Moves a tensor between two providers' memories";
  let arguments = (ins AnyType:$input, StrAttr:$from, StrAttr:$to);
  let results = (outs AnyType:$output);
  let assemblyFormat = [{
    $input `from` `(` $from `)` `to` `(` $to `)` attr-dict `:` type($input)
  }];
}

def Kiln_CheckOp : Kiln_Op<"check", [MemoryEffects<[MemWrite]>]> {
  let summary = "A run-time check whose failure fails the run";
  let description = [{
    Guards an assumption the compiled code makes about a run-time value,
    e.g. that a shape-deciding input agrees with the shape the model was
    compiled for. When `condition` is false the run still completes (the
    code after a check stays memory-safe), and the runtime reports
    `message` as the run's error. The condition is an i1, or a 0-D tensor
    of i1 before lowering (kiln-lower-partitions extracts it).
    kiln-plan-memory lowers it to a store of the message's address into
    the first 8 bytes of the arena. A `fatal` check guards run-time sizes
    (code after it would read or write out of bounds): its failure ends the
    run at once, through `kilnRunFailed` of libkiln_rt. Up to three i64
    `values` (an offending index, its bound) replace the `{}`s of the
    message in order; `kilnCheckMessage` of libkiln_rt formats them when
    the check fails.
    ```mlir
    kiln.check %ok, "node \"r\" (ReduceSum): the axes input disagrees with ..."
    kiln.check %same, "node \"a\" (Add): inputs differ in size at run time" fatal
    kiln.check %in, "node \"g\" (Gather): index {} is outside [-{}, {})"(%i, %n, %n : i64, i64, i64) : i1
    ```
  }];
  let arguments = (ins AnyTypeOf<[I1, 0DTensorOf<[I1]>]>:$condition, StrAttr:$message,
                       UnitAttr:$fatal, Variadic<I64>:$values);
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$condition, "::llvm::StringRef":$message,
                                 CArg<"bool", "false">:$fatal,
                                 CArg<"::mlir::ValueRange", "{}">:$values), [{
    $_state.addOperands(condition);
    $_state.addOperands(values);
    $_state.addAttribute(getMessageAttrName($_state.name), $_builder.getStringAttr(message));
    if (fatal)
      $_state.addAttribute(getFatalAttrName($_state.name), $_builder.getUnitAttr());
  }]>];
  let hasVerifier = 1;
  // (A check that always holds goes: one between a kernel and its
  // epilogue kept them apart.)
  let hasCanonicalizeMethod = 1;
  let assemblyFormat = [{
    $condition `,` $message (`(` $values^ `:` type($values) `)`)? (`fatal` $fatal^)? attr-dict
    `:` type($condition)
  }];
}

def Kiln_ProfileBeginOp : Kiln_Op<"profile_begin", [MemoryEffects<[MemWrite]>]> {
  let summary = "Where the kernel of one ONNX node begins, for the profiler";
  let description = [{
    kiln-profile-kernels brackets each node of a host partition with
    `kiln.profile_begin` and `kiln.profile_end`; `descriptor` is what the
    runtime reports for it: the node's name, op type, provider and the
    event's JSON args, separated by `\x1f` (unit separator). The ops stay
    in place through lowering and bufferization (they touch no tensor), and
    kiln-plan-memory lowers each pair to calls of `kilnProfileBegin` /
    `kilnProfileEnd` guarded by one branch on the profiler slot of the
    arena, or erases it when nothing that does work lies between.
    ```mlir
    kiln.profile_begin "/fc1/Gemm\1fGemm\1fcpu\1f\"output_size\":\"2048\""
    ```
  }];
  let arguments = (ins StrAttr:$descriptor);
  let assemblyFormat = "$descriptor attr-dict";
}

def Kiln_ProfileEndOp : Kiln_Op<"profile_end", [MemoryEffects<[MemWrite]>]> {
  let summary = "Where the kernel begun by the last kiln.profile_begin ends";
  let arguments = (ins StrAttr:$descriptor);
  let assemblyFormat = "$descriptor attr-dict";
}

def Kiln_RuntimeCallOp : Kiln_Op<"runtime_call", [
    AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<BufferizableOpInterface, [
        "bufferizesToMemoryRead", "bufferizesToMemoryWrite",
        "getAliasingValues", "bufferize"]>]> {
  let summary = "A call into libkiln_rt that reads or writes whole tensors";
  let description = [{
    Calls the C function `callee` of the runtime library (sequence and
    optional values live there as objects). Scalar `args` pass as they are;
    a tensor or memref arg passes as the address (i64) of its dense
    row-major buffer, which the callee reads. Each of `outs` is a buffer
    the callee fills; on tensors, the first results are their new values.
    A last scalar result is the callee's return value.

    The op bufferizes like a destination-style op (an `outs` buffer that is
    not dense row-major is filled through a dense copy), and
    kiln-lower-runtime-calls turns the memref form into `func.call`.
    ```mlir
    %h2 = kiln.runtime_call @kilnSeqInsert(%h, %t, ...) : (i64, tensor<3xi64>, ...) -> i64
    %t = kiln.runtime_call @kilnSeqAt(%h, %i, ...) outs(%init : tensor<3xf32>) : (...) -> tensor<3xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$args,
                       Variadic<AnyShaped>:$outs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` (`outs` `(` $outs^ `:` type($outs) `)`)? attr-dict
    `:` functional-type($args, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The new values of `outs` (on tensors).
    ::mlir::ResultRange getWritten();
    /// The callee's return value, or null.
    ::mlir::Value getValue();
  }];
}

#endif // KILN_DIALECT_KILN_OPS
