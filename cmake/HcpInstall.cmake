# Install rules, by component (each a package of scripts/package.sh):
#   tools   the hcp command with hcp-lint and hcp-logscan, man pages and shell completions (hcp-tools)
#   lib     libhcp.so.<soversion> (libhcp<soversion>)
#   cuda, mpi  the modules libhcp loads for the GPU path and the MPI backend (not packaged: their libraries are
#           not Debian's)
#   dev     hcp/hcp.h, the libhcp.so link, the CMake package and hcp.pc (libhcp-dev)
#   python  the Python package, into HCP_INSTALL_PYTHONDIR (python3-hcp)
# A tools-only build (HCP_TOOLS_ONLY) has the tools component alone.
include(CMakePackageConfigHelpers)

install(TARGETS hcp_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
foreach(alias IN LISTS HCP_CLI_ALIASES)
  install(CODE "file(CREATE_LINK hcp \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${alias}\" SYMBOLIC)"
          COMPONENT tools)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools
        FILES_MATCHING PATTERN "*.1")
install(FILES ${PROJECT_SOURCE_DIR}/completions/hcp.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME hcp COMPONENT tools)
foreach(alias IN LISTS HCP_CLI_ALIASES)
  install(FILES ${PROJECT_SOURCE_DIR}/completions/hcp.bash
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${alias} COMPONENT tools)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/completions/_hcp DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions
        COMPONENT tools)
install(FILES ${PROJECT_SOURCE_DIR}/completions/hcp.fish ${PROJECT_SOURCE_DIR}/completions/hcp-lint.fish
              ${PROJECT_SOURCE_DIR}/completions/hcp-logscan.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT tools)

if(HCP_TOOLS_ONLY)
  return()
endif()

set(HCP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hcp" CACHE STRING "Where hcpConfig.cmake is installed")
install(TARGETS hcp EXPORT hcpTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hcp COMPONENT dev)
# The modules (the GPU path, the MPI backend), loaded by libhcp.so and the hcp command from beside them / ../lib.
foreach(module cuda mpi)
  if(TARGET hcp_${module})
    install(TARGETS hcp_${module} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${module})
  endif()
endforeach()
install(EXPORT hcpTargets NAMESPACE hcp:: DESTINATION ${HCP_INSTALL_CMAKEDIR} COMPONENT dev)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hcpConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/hcpConfig.cmake
                              INSTALL_DESTINATION ${HCP_INSTALL_CMAKEDIR})
# 0.x releases may change the ABI between minor versions; from 1.0 on the major version decides.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hcpConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hcpConfig.cmake ${PROJECT_BINARY_DIR}/hcpConfigVersion.cmake
        DESTINATION ${HCP_INSTALL_CMAKEDIR} COMPONENT dev)

# pkg-config beside the CMake package, relocatable (the prefix is relative to the .pc file), so a scratch
# `cmake --install --prefix` works as well as the configured prefix.
file(RELATIVE_PATH HCP_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" HCP_PC_TO_PREFIX "${HCP_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/hcp.pc.in ${PROJECT_BINARY_DIR}/hcp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hcp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# The Python package (pure Python over the C ABI through ctypes): where the Python that imports it looks. Debian's
# python3 reads /usr/lib/python3/dist-packages; for another prefix, point PYTHONPATH at HCP_INSTALL_PYTHONDIR.
set(HCP_INSTALL_PYTHONDIR "lib/python3/dist-packages" CACHE STRING "Where the hcp Python package is installed")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/hcp DESTINATION ${HCP_INSTALL_PYTHONDIR} COMPONENT python
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
