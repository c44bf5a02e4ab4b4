# RE2 as the global target hcp::re2 (included once, by the top-level CMakeLists). Through pkg-config where it
# knows re2 (newer RE2 releases need abseil's flags, which only its re2.pc lists); otherwise by header and library
# under CMAKE_PREFIX_PATH and the system paths, which is how scripts/gpu-check.sh builds from unpacked Debian
# packages on a machine without pkg-config.
# HCP_PORTABLE finds the archive by name (CMAKE_PREFIX_PATH first: scripts/portable-deps.sh's build, whose RE2
# installs no re2.pc, would otherwise lose to the system's).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND AND NOT HCP_PORTABLE)
  pkg_check_modules(RE2 QUIET IMPORTED_TARGET GLOBAL re2)
endif()
if(TARGET PkgConfig::RE2)
  add_library(hcp::re2 ALIAS PkgConfig::RE2)
else()
  find_path(HCP_RE2_INCLUDE_DIR re2/re2.h)
  find_library(HCP_RE2_LIBRARY re2)
  if(NOT HCP_RE2_INCLUDE_DIR OR NOT HCP_RE2_LIBRARY)
    message(FATAL_ERROR "RE2 not found: neither pkg-config nor the header re2/re2.h and library libre2 "
                        "(install libre2-dev, or set CMAKE_PREFIX_PATH)")
  endif()
  add_library(hcp_re2 UNKNOWN IMPORTED GLOBAL)
  set_target_properties(hcp_re2 PROPERTIES IMPORTED_LOCATION "${HCP_RE2_LIBRARY}"
                                           INTERFACE_INCLUDE_DIRECTORIES "${HCP_RE2_INCLUDE_DIR}")
  add_library(hcp::re2 ALIAS hcp_re2)
endif()
