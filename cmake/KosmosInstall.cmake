include(CMakePackageConfigHelpers)

install(TARGETS kosmos EXPORT KosmosTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY src/kosmos DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/kosmos/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kosmos)
if(KOSMOS_BACKEND STREQUAL "CUDA")
  install(DIRECTORY cuda_specializations/kosmos DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.hpp")
endif()
if(TARGET kosmos_cli)
  install(TARGETS kosmos_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(KOSMOS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kosmos)
install(EXPORT KosmosTargets NAMESPACE Kosmos:: DESTINATION ${KOSMOS_CMAKE_DIR})
configure_package_config_file(cmake/KosmosConfig.cmake.in
  ${PROJECT_BINARY_DIR}/KosmosConfig.cmake INSTALL_DESTINATION ${KOSMOS_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/KosmosConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/KosmosConfig.cmake ${PROJECT_BINARY_DIR}/KosmosConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/KosmosFindHDF5.cmake
  DESTINATION ${KOSMOS_CMAKE_DIR})
