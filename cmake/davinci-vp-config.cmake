# SPDX-License-Identifier: MIT
# find_package(davinci-vp): the firmware SDK, dvp_firmware() (dvp-firmware.cmake); and, when the
# models component is installed, the model libraries: davinci-vp::models (all of them) and
# davinci-vp::<model> (aicore, dram, cache, ring, cpu, platform, ...). DAVINCI_VP_PRESETS_DIR
# names the installed presets (set DVP_PRESETS to it for platform::load_scenario).
include(${CMAKE_CURRENT_LIST_DIR}/dvp-firmware.cmake)
get_filename_component(DAVINCI_VP_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(DAVINCI_VP_PRESETS_DIR "${DAVINCI_VP_PREFIX}/share/davinci-vp/presets")

if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/davinci-vp-targets.cmake" AND NOT TARGET davinci-vp::models)
  # What the libraries link: the same Debian packages, found the way the build found them.
  include(CMakeFindDependencyMacro)
  find_dependency(PkgConfig)
  find_dependency(nlohmann_json 3.10)
  find_dependency(Threads)
  find_dependency(JPEG)  # DVPP's pixels: libjpeg-turbo and libpng
  find_dependency(PNG)
  set(_dvp_in_config TRUE)  # a missing serial OpenBLAS makes the package not found, not an error
  include(${CMAKE_CURRENT_LIST_DIR}/openblas-serial.cmake)  # the cube's BLAS: OpenBLAS::serial
  unset(_dvp_in_config)
  if(NOT TARGET OpenBLAS::serial)  # missing: <name>_FOUND is false and says why
    return()
  endif()
  # VAR:module+module...: DVPP's libswscale (libavcodec and libavformat are loaded when called).
  foreach(pkg SYSTEMC:systemc YAMLCPP:yaml-cpp UNICORN:unicorn SWSCALE:libswscale+libavutil)
    string(REPLACE ":" ";" parts ${pkg})
    list(GET parts 0 var)
    list(GET parts 1 modules)
    string(REPLACE "+" ";" modules ${modules})
    if(NOT TARGET PkgConfig::${var})
      # Not REQUIRED: a missing module makes the package not found (and say why), as
      # find_dependency does, rather than end the consumer's configure under QUIET.
      pkg_check_modules(${var} QUIET IMPORTED_TARGET GLOBAL ${modules})
      if(NOT ${var}_FOUND)
        set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
        string(REPLACE ";" " " modules "${modules}")
        set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE "pkg-config found no ${modules} (scripts/setup.sh installs them)")
        return()
      endif()
    endif()
  endforeach()
  include(${CMAKE_CURRENT_LIST_DIR}/davinci-vp-targets.cmake)
endif()
