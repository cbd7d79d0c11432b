# SPDX-License-Identifier: MIT
# The davinci-vp firmware SDK: builds AArch64 firmware for the platform's control CPU and AI CPU
# cores with Debian's cross compiler and the BSP (firmware/bsp). Used by this project and by
# outside ones, from the source tree or installed (cmake --install ... --component firmware-sdk:
# share/davinci-vp/cmake, share/davinci-vp/firmware/bsp). docs/firmware-sdk.md describes it.
#
#   dvp_firmware(name SOURCES file...
#                [DEFINES NAME[=value]...] [INCLUDES dir...] [OPTIONS compiler-flag...]
#                [STACK_SIZE bytes] [CORES n] [MEMORY_SIZE bytes] [FP]
#                [OUTPUT_DIRECTORY dir])
#
# makes <dir>/<name>.bin (the raw image a scenario's firmware.image loads), <name>.elf and
# <name>.map (default dir: the current binary directory), and a target firmware-<name> in ALL.
# STACK_SIZE (per core), CORES (cores that get a stack) and MEMORY_SIZE (DRAM the firmware owns)
# set the link script's parameters; the heap is what lies between .bss and the stacks. FP lets
# the compiler use FP/SIMD registers (float, double, printf's %f); without it the firmware is
# integer-only (-mgeneral-regs-only) and interrupts save no FP state.
include_guard(GLOBAL)

get_filename_component(DVP_BSP_DIR "${CMAKE_CURRENT_LIST_DIR}/../firmware/bsp" ABSOLUTE)
if(NOT EXISTS "${DVP_BSP_DIR}/bsp.h")
  message(FATAL_ERROR "dvp-firmware.cmake: no BSP at ${DVP_BSP_DIR} (it expects firmware/bsp next to its cmake/ "
                      "folder, as in the source tree and the installed share/davinci-vp)")
endif()

find_program(DVP_AARCH64_CC aarch64-linux-gnu-gcc)
find_program(DVP_AARCH64_OBJCOPY aarch64-linux-gnu-objcopy)
if(NOT DVP_AARCH64_CC OR NOT DVP_AARCH64_OBJCOPY)
  message(FATAL_ERROR "the davinci-vp firmware SDK needs aarch64-linux-gnu-gcc and aarch64-linux-gnu-objcopy "
                      "(Debian: apt-get install gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu)")
endif()

set(DVP_BSP_SOURCES ${DVP_BSP_DIR}/start.S ${DVP_BSP_DIR}/bsp.c ${DVP_BSP_DIR}/printf.c ${DVP_BSP_DIR}/heap.c)
set(DVP_BSP_HEADERS ${DVP_BSP_DIR}/bsp.h ${DVP_BSP_DIR}/soc_regs.h ${DVP_BSP_DIR}/dvp_abi.h ${DVP_BSP_DIR}/vecacc.h
                     ${DVP_BSP_DIR}/vecacc_regs.h)
# Every firmware's compiler flags. Freestanding, MMU off: device memory, so no unaligned access.
# -fno-tree-loop-distribute-patterns keeps gcc from turning the BSP's memset into a call to itself.
set(DVP_FIRMWARE_CFLAGS -ffreestanding -fno-builtin -fno-pie -mstrict-align -O2 -g
    -fno-tree-loop-distribute-patterns -Wall -Wextra -I${DVP_BSP_DIR})
set(DVP_FIRMWARE_LDFLAGS -nostdlib -static -no-pie -T ${DVP_BSP_DIR}/link.ld -Wl,--build-id=none
    -Wl,--no-warn-rwx-segments)

# A link script parameter: bytes as a number, 0x hex, or with a K or M suffix.
function(_dvp_defsym out fw key symbol value)
  if(NOT value MATCHES "^(0x[0-9a-fA-F]+|[0-9]+[KM]?)$")
    message(FATAL_ERROR "dvp_firmware(${fw}): ${key} must be a number (like 32768, 0x8000 or 32K), got '${value}'")
  endif()
  set(${out} ${${out}} -Wl,--defsym=${symbol}=${value} PARENT_SCOPE)
endfunction()

# One object: its own command, with a depfile, so a change to a header rebuilds what includes it.
function(_dvp_object out src obj flags)
  get_filename_component(dir "${obj}" DIRECTORY)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${DVP_AARCH64_CC} ${flags} -MMD -MF ${obj}.d -c ${src} -o ${obj}
    DEPENDS ${src} DEPFILE ${obj}.d
    COMMENT "firmware: compiling ${src}" VERBATIM)
  set(${out} ${${out}} ${obj} PARENT_SCOPE)
endfunction()

function(dvp_firmware name)
  cmake_parse_arguments(FW "FP" "STACK_SIZE;CORES;MEMORY_SIZE;OUTPUT_DIRECTORY" "SOURCES;DEFINES;INCLUDES;OPTIONS"
                        ${ARGN})
  if(FW_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dvp_firmware(${name}): unknown argument(s) ${FW_UNPARSED_ARGUMENTS} (sources go after SOURCES)")
  endif()
  if(NOT FW_SOURCES)
    message(FATAL_ERROR "dvp_firmware(${name}): no SOURCES")
  endif()
  if(FW_CORES AND NOT FW_CORES MATCHES "^([1-9]|1[0-6])$")
    message(FATAL_ERROR "dvp_firmware(${name}): CORES must be 1 to 16, got '${FW_CORES}'")
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR})
  if(FW_OUTPUT_DIRECTORY)
    get_filename_component(out "${FW_OUTPUT_DIRECTORY}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(cflags ${DVP_FIRMWARE_CFLAGS})
  if(NOT FW_FP)
    list(APPEND cflags -mgeneral-regs-only)
  endif()
  foreach(d ${FW_DEFINES})
    list(APPEND cflags -D${d})
  endforeach()
  foreach(i ${FW_INCLUDES})
    get_filename_component(i "${i}" ABSOLUTE)
    list(APPEND cflags -I${i})
  endforeach()
  list(APPEND cflags ${FW_OPTIONS})
  set(ldflags ${DVP_FIRMWARE_LDFLAGS} -Wl,-Map=${out}/${name}.map)
  if(FW_STACK_SIZE)
    _dvp_defsym(ldflags ${name} STACK_SIZE __dvp_stack_size ${FW_STACK_SIZE})
  endif()
  if(FW_CORES)
    _dvp_defsym(ldflags ${name} CORES __dvp_cores ${FW_CORES})
  endif()
  if(FW_MEMORY_SIZE)
    _dvp_defsym(ldflags ${name} MEMORY_SIZE __dvp_memory_size ${FW_MEMORY_SIZE})
  endif()
  # Objects in <name>.dir, numbered: two sources may share a file name.
  set(objs)
  set(n 0)
  foreach(src ${DVP_BSP_SOURCES} ${FW_SOURCES})
    get_filename_component(src "${src}" ABSOLUTE)
    get_filename_component(base "${src}" NAME)
    _dvp_object(objs ${src} ${out}/${name}.dir/${n}-${base}.o "${cflags}")
    math(EXPR n "${n} + 1")
  endforeach()
  add_custom_command(OUTPUT ${out}/${name}.bin ${out}/${name}.elf
    COMMAND ${DVP_AARCH64_CC} ${cflags} ${ldflags} -o ${out}/${name}.elf ${objs} -lgcc
    COMMAND ${DVP_AARCH64_OBJCOPY} -O binary ${out}/${name}.elf ${out}/${name}.bin
    DEPENDS ${objs} ${DVP_BSP_DIR}/link.ld
    COMMENT "firmware ${name}: ${out}/${name}.bin" VERBATIM)
  add_custom_target(firmware-${name} ALL DEPENDS ${out}/${name}.bin)
  set_target_properties(firmware-${name} PROPERTIES DVP_FIRMWARE_BIN ${out}/${name}.bin DVP_FIRMWARE_ELF ${out}/${name}.elf)
endfunction()
