//===- kiln-opt.cpp - mlir-opt with kiln's dialects and passes ------------===//
#include "compiler/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  kiln::registerAllKilnPasses();
  mlir::DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
