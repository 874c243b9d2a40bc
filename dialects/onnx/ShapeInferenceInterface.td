//===- ShapeInferenceInterface.td - onnx shape inference ---*- tablegen -*-===//

#ifndef KILN_ONNX_SHAPE_INFERENCE_INTERFACE_TD
#define KILN_ONNX_SHAPE_INFERENCE_INTERFACE_TD

include "mlir/IR/OpBase.td"

def ONNX_ShapeInferenceOpInterface : OpInterface<"ShapeInferenceOpInterface"> {
  let cppNamespace = "::kiln::onnx";
  let description = [{
    Refines the result types of an onnx op from its operand types and
    attributes. All ops share one out-of-line implementation
    (`kiln::onnx::inferShapesFor`) so the rules live in C++ next to each
    other rather than in ~200 generated classes.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Infer and set the result types; fail if inconsistent.",
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"inferShapes",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::kiln::onnx::inferShapesFor($_op.getOperation());
      }]>,
  ];
}

#endif // KILN_ONNX_SHAPE_INFERENCE_INTERFACE_TD
