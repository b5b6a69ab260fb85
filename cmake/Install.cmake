# Installs headers, libchorus, a CMake package (find_package(Chorus)) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/chorus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS chorus EXPORT ChorusTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ChorusTargets NAMESPACE Chorus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Chorus)

configure_package_config_file(cmake/ChorusConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ChorusConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Chorus)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ChorusConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ChorusConfig.cmake ${CMAKE_BINARY_DIR}/ChorusConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Chorus)

configure_file(cmake/chorus.pc.in ${CMAKE_BINARY_DIR}/chorus.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/chorus.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
