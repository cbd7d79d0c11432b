# SPDX-License-Identifier: MIT
# dvp_verilate(): builds Verilog into a davinci-vp RTL plug-in from CMake, for those who prefer a
# build rule to the dvp-verilate command (docs/rtl-cosim.md). Both run the same tool.
#
#   dvp_verilate(my_acc TOP my_top SOURCES my.v more.v [INCLUDE_DIRS dir...] [PARAMS W=128 ...]
#                [OUTPUT path/my_top.so] [NO_TRACE] [VERILATOR_ARGS ...])
#
# makes target `my_acc` that writes OUTPUT (default: ${CMAKE_CURRENT_BINARY_DIR}/<top>.so); it is
# rebuilt when a source or the tool changes.
set(DVP_VERILATE_TOOL ${CMAKE_BINARY_DIR}/bin/dvp-verilate CACHE INTERNAL "the dvp-verilate command")

function(dvp_verilate target)
  cmake_parse_arguments(V "NO_TRACE" "TOP;OUTPUT" "SOURCES;INCLUDE_DIRS;PARAMS;VERILATOR_ARGS" ${ARGN})
  if(NOT V_TOP OR NOT V_SOURCES)
    message(FATAL_ERROR "dvp_verilate(${target}): TOP and SOURCES are required")
  endif()
  if(NOT V_OUTPUT)
    set(V_OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${V_TOP}.so)
  endif()
  set(args --top ${V_TOP} --out ${V_OUTPUT} --jobs 1)
  foreach(d ${V_INCLUDE_DIRS})
    list(APPEND args -I ${d})
  endforeach()
  foreach(p ${V_PARAMS})
    list(APPEND args -G ${p})
  endforeach()
  foreach(a ${V_VERILATOR_ARGS})
    list(APPEND args --verilator-arg=${a})
  endforeach()
  if(V_NO_TRACE)
    list(APPEND args --no-trace)
  endif()
  add_custom_command(OUTPUT ${V_OUTPUT}
                     COMMAND ${DVP_VERILATE_TOOL} ${args} ${V_SOURCES}
                     DEPENDS ${V_SOURCES} ${DVP_VERILATE_TOOL} ${DVP_RTL_ABI_DIR}/dvp_rtl_plugin.h
                     COMMENT "dvp-verilate ${V_TOP} -> ${V_OUTPUT}"
                     VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${V_OUTPUT})
endfunction()
