# Install rules and the package config behind `find_package(kiln)`.
include(CMakePackageConfigHelpers)

install(EXPORT kilnTargets NAMESPACE kiln::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kilnConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake
              ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/KilnAddModel.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
