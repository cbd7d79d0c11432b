# SPDX-License-Identifier: MIT
# OpenBLAS::serial: Debian's single-threaded OpenBLAS (libopenblas-serial-dev). Its soname is the
# same as the threaded build's, which the system's alternatives pick by default, so the binaries
# carry its directory in their run path, in the build tree and installed.
if(NOT TARGET OpenBLAS::serial)
  set(_dvp_serial_dir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial)
  find_library(OPENBLAS_SERIAL_LIBRARY openblas PATHS ${_dvp_serial_dir} NO_DEFAULT_PATH)
  find_path(OPENBLAS_SERIAL_INCLUDE_DIR cblas.h PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial
            NO_DEFAULT_PATH)
  if(NOT OPENBLAS_SERIAL_LIBRARY OR NOT OPENBLAS_SERIAL_INCLUDE_DIR)
    string(CONCAT _dvp_missing "the serial OpenBLAS is missing from ${_dvp_serial_dir}: "
                  "apt-get install libopenblas-serial-dev (scripts/setup.sh)")
    if(_dvp_in_config)
      # Read by the package config (find_package(davinci-vp), which sets _dvp_in_config): the
      # package is not found, and says why; a FATAL_ERROR would end the consumer's configure,
      # QUIET or not.
      set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
      set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE "${_dvp_missing}")
      return()
    endif()
    message(FATAL_ERROR "${_dvp_missing}")
  endif()
  add_library(OpenBLAS::serial UNKNOWN IMPORTED GLOBAL)
  set_target_properties(OpenBLAS::serial PROPERTIES IMPORTED_LOCATION ${OPENBLAS_SERIAL_LIBRARY}
                                                    INTERFACE_INCLUDE_DIRECTORIES ${OPENBLAS_SERIAL_INCLUDE_DIR})
  # Installed executables keep the run path to it too (the build tree's gets it from the link).
  list(APPEND CMAKE_INSTALL_RPATH ${_dvp_serial_dir})
endif()
