# kiln_add_model(NAME MODEL model.onnx [PROVIDERS cpu ...] [TARGET_CPU cpu]
#                [INPUT_SHAPES name=d0,d1 ...])
#
# Compiles an ONNX model at build time into a static library target NAME
# whose include directory holds the generated NAME.h. The model is
# recompiled when the .onnx file or the kiln compiler changes. Works inside
# kiln's own build and from an installed kiln (find_package(kiln)).
function(kiln_add_model name)
  cmake_parse_arguments(ARG "" "MODEL;TARGET_CPU" "PROVIDERS;INPUT_SHAPES" ${ARGN})
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "kiln_add_model(${name}): MODEL is required")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT ARG_PROVIDERS)
    set(ARG_PROVIDERS cpu)
  endif()
  string(REPLACE ";" "," providers "${ARG_PROVIDERS}")
  set(extra)
  if(ARG_TARGET_CPU)
    list(APPEND extra --target-cpu=${ARG_TARGET_CPU})
  endif()
  foreach(shape ${ARG_INPUT_SHAPES})
    list(APPEND extra --input-shape=${shape})
  endforeach()

  if(TARGET kiln)
    set(compiler $<TARGET_FILE:kiln>)
    set(compiler_dep kiln)
    set(runtime kiln_rt)
  else()
    set(compiler ${KILN_COMPILER})
    set(compiler_dep ${KILN_COMPILER})
    set(runtime kiln::kiln_rt)
  endif()

  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/kiln_models/${name})
  set(object ${out_dir}/${name}.o)
  add_custom_command(
    OUTPUT ${object} ${out_dir}/${name}.h
    COMMAND ${compiler} compile ${model} -o ${out_dir}/${name}
            --providers=${providers} --no-shared -q ${extra}
    DEPENDS ${model} ${compiler_dep}
    COMMENT "kiln: compiling model ${name} (${ARG_MODEL})"
    VERBATIM)
  set_source_files_properties(${object} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${name} STATIC ${object} ${out_dir}/${name}.h)
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE CXX)
  target_include_directories(${name} PUBLIC ${out_dir})
  # Kernels call libm (expf, tanhf, ...).
  target_link_libraries(${name} PUBLIC ${runtime} m)
endfunction()
