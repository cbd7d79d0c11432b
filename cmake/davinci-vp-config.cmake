# find_package(davinci-vp): the firmware SDK, dvp_firmware() (dvp-firmware.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/dvp-firmware.cmake)
