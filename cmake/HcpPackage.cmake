# Debian packages with CPack, one per install component (HcpInstall.cmake); scripts/package.sh runs `cpack -G DEB`
# in the regular build (packaged under /usr; the CUDA and MPI modules stay out: their libraries are not Debian's).
#   hcp-tools_<version>_amd64.deb           the three programs, man pages, completions
#   libhcp<soversion>_<version>_amd64.deb   the shared library, named for its soname as Debian policy asks
#   libhcp-dev_<version>_amd64.deb          headers, CMake package, hcp.pc
#   python3-hcp_<version>_all.deb           the Python package over the library
# Depends of the ELF packages come from dpkg-shlibdeps; the others name their library at this exact version.
set(CPACK_PACKAGE_NAME hcp)
set(CPACK_PACKAGE_VENDOR "hcp")
set(CPACK_PACKAGE_CONTACT "hcp developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/cpack")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS OFF)

if(HCP_TOOLS_ONLY)
  set(CPACK_COMPONENTS_ALL tools)
else()
  set(CPACK_COMPONENTS_ALL tools lib dev python)
endif()
set(_hcp_lib_package "libhcp${HCP_SOVERSION}")
set(_hcp_exact "(= ${PROJECT_VERSION})")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME hcp-tools)
set(CPACK_DEBIAN_TOOLS_FILE_NAME "hcp-tools_${PROJECT_VERSION}_amd64.deb")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}/capi")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "hcp, hcp-lint and hcp-logscan: context-parallel layouts, training config linter, training log scanner\n"
    "hcp-lint checks Megatron-Core, Bridge, NeMo and framework training configs and launch scripts for\n"
    "context-parallel pitfalls; hcp-logscan tells from training logs whether hierarchical CP was active.")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME "${_hcp_lib_package}")
set(CPACK_DEBIAN_LIB_FILE_NAME "${_hcp_lib_package}_${PROJECT_VERSION}_amd64.deb")
set(CPACK_DEBIAN_LIB_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_GENERATE_SHLIBS ON)  # a shlibs file, so packages built against it get Depends
set(CPACK_COMPONENT_LIB_DESCRIPTION "hcp C library (libhcp.so.${HCP_SOVERSION})\n"
    "Rank layouts, CP attention on CPU, lint, log scan and planning behind a stable C ABI.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libhcp-dev)
set(CPACK_DEBIAN_DEV_FILE_NAME "libhcp-dev_${PROJECT_VERSION}_amd64.deb")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_hcp_lib_package} ${_hcp_exact}")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION "hcp C library: development files\n"
    "hcp/hcp.h, the libhcp.so link, the CMake package (find_package(hcp)) and hcp.pc.")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-hcp)
set(CPACK_DEBIAN_PYTHON_FILE_NAME "python3-hcp_${PROJECT_VERSION}_all.deb")
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.9), ${_hcp_lib_package} ${_hcp_exact}")
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_COMPONENT_PYTHON_DESCRIPTION "hcp: Python bindings\n"
    "The hcp package (ctypes over libhcp): topology, lint, log scan, plan and CP attention.")

include(CPack)
