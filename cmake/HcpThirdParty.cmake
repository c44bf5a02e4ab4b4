# The libraries lint and logscan parse and decompress with, as hcp::tomlplusplus, hcp::yaml_cpp, hcp::zstd and
# hcp::zlib. Normally Debian's shared libraries. With HCP_PORTABLE (scripts/package.sh), every one is linked in
# statically (Debian ships libyaml-cpp.a, libzstd.a, libz.a, libre2.a; toml++ compiles header-only), libstdc++ and
# libgcc too, and a tools-only build links its programs fully static: the release tarball's and the wheel's programs
# then run on any x86_64 Linux, and libhcp.so needs only libc and libm. Debian's archives are not
# position-independent, so the release builds find PIC ones first on CMAKE_PREFIX_PATH (scripts/portable-deps.sh
# builds them from Debian's sources).
option(HCP_PORTABLE "Link third-party and C++ runtime libraries statically (release artefacts)" OFF)
if(HCP_PORTABLE)
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)  # find_library and pkg-config's imported targets pick the archives
  add_link_options(-static-libstdc++ -static-libgcc)
  if(HCP_TOOLS_ONLY)
    add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-static>)
  endif()
endif()

find_package(tomlplusplus REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(zstd REQUIRED)
find_package(ZLIB REQUIRED)

if(HCP_PORTABLE)
  # toml++ header-only: the same headers the shared library was built from.
  get_target_property(_hcp_toml_includes tomlplusplus::tomlplusplus INTERFACE_INCLUDE_DIRECTORIES)
  add_library(hcp_tomlplusplus INTERFACE)
  target_include_directories(hcp_tomlplusplus SYSTEM INTERFACE ${_hcp_toml_includes})
  target_compile_definitions(hcp_tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
  find_library(HCP_YAML_CPP_ARCHIVE NAMES yaml-cpp REQUIRED)
  get_target_property(_hcp_yaml_includes yaml-cpp INTERFACE_INCLUDE_DIRECTORIES)
  add_library(hcp_yaml_cpp STATIC IMPORTED GLOBAL)
  set_target_properties(hcp_yaml_cpp PROPERTIES IMPORTED_LOCATION "${HCP_YAML_CPP_ARCHIVE}")
  if(_hcp_yaml_includes)
    set_target_properties(hcp_yaml_cpp PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_hcp_yaml_includes}")
  endif()
  add_library(hcp::zstd ALIAS zstd::libzstd_static)
else()
  add_library(hcp_tomlplusplus INTERFACE)
  target_link_libraries(hcp_tomlplusplus INTERFACE tomlplusplus::tomlplusplus)
  add_library(hcp_yaml_cpp INTERFACE)
  target_link_libraries(hcp_yaml_cpp INTERFACE yaml-cpp)
  add_library(hcp::zstd ALIAS zstd::libzstd_shared)
endif()
add_library(hcp::tomlplusplus ALIAS hcp_tomlplusplus)
add_library(hcp::yaml_cpp ALIAS hcp_yaml_cpp)
add_library(hcp::zlib ALIAS ZLIB::ZLIB)
