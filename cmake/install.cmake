# SPDX-License-Identifier: MIT
# Installing davinci-vp, and using it from other projects (docs/architecture.md, "The models as a
# library"):
#   cmake --install build --prefix P                           everything below
#   cmake --install build --prefix P --component models        the model libraries, their headers,
#       the presets and the CMake package: find_package(davinci-vp) gives davinci-vp::models
#   cmake --install build --prefix P --component tools         dvp, dvas, dvdis, the firmware images
#   cmake --install build --prefix P --component firmware-sdk  the firmware SDK (firmware/CMakeLists.txt)
# The executables find the presets and the firmware images in share/davinci-vp beside their bin/;
# the build tree has the same layout through links, so no path is baked into a binary.

file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/davinci-vp)
file(CREATE_LINK ${CMAKE_SOURCE_DIR}/scenarios/presets ${CMAKE_BINARY_DIR}/share/davinci-vp/presets SYMBOLIC)
file(CREATE_LINK ${CMAKE_BINARY_DIR}/firmware ${CMAKE_BINARY_DIR}/share/davinci-vp/firmware SYMBOLIC)
file(CREATE_LINK ${CMAKE_BINARY_DIR}/rtl ${CMAKE_BINARY_DIR}/share/davinci-vp/rtl SYMBOLIC)
file(CREATE_LINK ${CMAKE_SOURCE_DIR}/study/dvp-plot.py ${CMAKE_BINARY_DIR}/share/davinci-vp/dvp-plot.py SYMBOLIC)

# The models: every library, and davinci-vp::models, which links them all.
set(DVP_MODEL_LIBS dvp_version dvp_common dvp_tlmcheck dvp_ring dvp_cache dvp_dram dvp_tgen dvp_mmio dvp_isa dvp_aicore
                   dvp_irq dvp_timer dvp_uart dvp_simctrl dvp_cpu dvp_ts dvp_dvpp dvp_rtl dvp_vecacc dvp_kernels dvp_platform)
add_library(dvp_models INTERFACE)
target_link_libraries(dvp_models INTERFACE ${DVP_MODEL_LIBS})
set_target_properties(dvp_models PROPERTIES EXPORT_NAME models)
foreach(lib ${DVP_MODEL_LIBS})
  string(REGEX REPLACE "^dvp_" "" short ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${short})  # davinci-vp::aicore, davinci-vp::dram, ...
endforeach()
install(TARGETS ${DVP_MODEL_LIBS} dvp_models EXPORT davinci-vp-targets ARCHIVE DESTINATION lib COMPONENT models)
install(EXPORT davinci-vp-targets NAMESPACE davinci-vp:: DESTINATION share/davinci-vp/cmake COMPONENT models)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/models/ DESTINATION ${DVP_INSTALL_INCLUDEDIR} COMPONENT models
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/firmware/kernels/library DESTINATION ${DVP_INSTALL_INCLUDEDIR}/kernels
        COMPONENT models FILES_MATCHING PATTERN "*.hpp")
file(GLOB DVP_PLATFORM_HEADERS ${CMAKE_SOURCE_DIR}/platform/*.hpp)
install(FILES ${DVP_PLATFORM_HEADERS} ${CMAKE_SOURCE_DIR}/firmware/bsp/dvp_abi.h DESTINATION ${DVP_INSTALL_INCLUDEDIR}
        COMPONENT models)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scenarios/presets/ DESTINATION share/davinci-vp/presets COMPONENT models)
install(FILES ${CMAKE_SOURCE_DIR}/cmake/davinci-vp-config.cmake ${CMAKE_BINARY_DIR}/davinci-vp-config-version.cmake
              ${CMAKE_SOURCE_DIR}/cmake/openblas-serial.cmake
        DESTINATION share/davinci-vp/cmake COMPONENT models)

# The tools, and the firmware images scenarios name.
install(TARGETS dvp dvas dvdis RUNTIME DESTINATION bin COMPONENT tools)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/study/dvp-plot.py DESTINATION share/davinci-vp COMPONENT tools)
# dvp-verilate, reading the plug-in interface from the installed headers.
set(DVP_RTL_ABI_DIR_SAVED ${DVP_RTL_ABI_DIR})
set(DVP_RTL_ABI_DIR ${CMAKE_INSTALL_PREFIX}/${DVP_INSTALL_INCLUDEDIR}/rtl)
configure_file(${CMAKE_SOURCE_DIR}/models/rtl/dvp-verilate.py ${CMAKE_BINARY_DIR}/install/dvp-verilate @ONLY)
set(DVP_RTL_ABI_DIR ${DVP_RTL_ABI_DIR_SAVED})
install(PROGRAMS ${CMAKE_BINARY_DIR}/install/dvp-verilate DESTINATION bin COMPONENT tools)
install(FILES ${CMAKE_BINARY_DIR}/rtl/vecacc.so DESTINATION share/davinci-vp/rtl COMPONENT tools)
install(FILES ${CMAKE_SOURCE_DIR}/models/rtl/dvp_rtl_plugin.h DESTINATION ${DVP_INSTALL_INCLUDEDIR}/rtl COMPONENT models)
install(DIRECTORY ${CMAKE_BINARY_DIR}/firmware/ DESTINATION share/davinci-vp/firmware COMPONENT tools
        FILES_MATCHING PATTERN "*.bin" PATTERN "CMakeFiles" EXCLUDE)
