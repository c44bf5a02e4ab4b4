# Install and export: libhcp.so, hcp/hcp.h, the hcp command, and a CMake package so that a downstream project can
# find_package(hcp) and link hcp::hcp.
include(CMakePackageConfigHelpers)

set(HCP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hcp" CACHE STRING "Where hcpConfig.cmake is installed")

install(TARGETS hcp EXPORT hcpTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hcp)
install(TARGETS hcp_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The modules (the GPU path, the MPI backend), loaded by libhcp.so and the hcp command from beside them / ../lib.
foreach(module hcp_cuda hcp_mpi)
  if(TARGET ${module})
    install(TARGETS ${module} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endforeach()
foreach(alias IN LISTS HCP_CLI_ALIASES)
  install(CODE "file(CREATE_LINK hcp \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${alias}\" SYMBOLIC)")
endforeach()
install(EXPORT hcpTargets NAMESPACE hcp:: DESTINATION ${HCP_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hcpConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/hcpConfig.cmake
                              INSTALL_DESTINATION ${HCP_INSTALL_CMAKEDIR})
# 0.x releases may change the ABI between minor versions; from 1.0 on the major version decides.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hcpConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hcpConfig.cmake ${PROJECT_BINARY_DIR}/hcpConfigVersion.cmake
        DESTINATION ${HCP_INSTALL_CMAKEDIR})

# pkg-config beside the CMake package, relocatable (the prefix is relative to the .pc file), so a scratch
# `cmake --install --prefix` works as well as the configured prefix.
file(RELATIVE_PATH HCP_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" HCP_PC_TO_PREFIX "${HCP_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/hcp.pc.in ${PROJECT_BINARY_DIR}/hcp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hcp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
