# The tree-sitter runtime and its bash and Python grammars as the static library hcp_tree_sitter (C). Both are published with
# their C sources on the npm registry (Debian's libtree-sitter-dev 0.20 cannot load the ABI 15 grammar), so the
# pinned tarballs are downloaded once into HCP_DEPS_DIR, checked against their SHA-512 and unpacked there; a build
# with the tarballs already in that folder needs no network. The versions and digests below are the only place
# they are named.
set(HCP_DEPS_DIR "${PROJECT_SOURCE_DIR}/.deps" CACHE PATH "Where pinned third-party sources are downloaded to")

# hcp_npm_sources(NAME VERSION SHA512 OUT_DIR SUBDIR): the unpacked package/ folder of an npm tarball, with only
# its SUBDIR (the C sources), licence and package.json taken out of the tarball.
function(hcp_npm_sources name version sha512 out_dir subdir)
  set(dir "${HCP_DEPS_DIR}/${name}-${version}")
  set(tarball "${HCP_DEPS_DIR}/${name}-${version}.tgz")
  if(NOT EXISTS "${dir}/package/package.json")
    if(NOT EXISTS "${tarball}")
      message(STATUS "Downloading ${name} ${version} from the npm registry")
      file(DOWNLOAD "https://registry.npmjs.org/${name}/-/${name}-${version}.tgz" "${tarball}.part"
           EXPECTED_HASH SHA512=${sha512} TLS_VERIFY ON STATUS status)
      list(GET status 0 code)
      if(NOT code EQUAL 0)
        file(REMOVE "${tarball}.part")
        list(GET status 1 why)
        message(FATAL_ERROR "Could not download ${name} ${version} (${why}). Put ${name}-${version}.tgz "
                            "(npm pack ${name}@${version}) into ${HCP_DEPS_DIR} and configure again.")
      endif()
      file(RENAME "${tarball}.part" "${tarball}")
    endif()
    file(SHA512 "${tarball}" actual)
    if(NOT actual STREQUAL sha512)
      message(FATAL_ERROR "${tarball}: SHA-512 ${actual} is not the pinned ${sha512}")
    endif()
    file(REMOVE_RECURSE "${dir}")
    file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${dir}" PATTERNS package/${subdir} package/LICENSE
         package/package.json)
  endif()
  set(${out_dir} "${dir}/package" PARENT_SCOPE)
endfunction()

hcp_npm_sources(tree-sitter 0.25.1
  9ab70476462d1dfacad40e9fb373ba171901a344228395d45ea1e1c54390bb46e63e8d34405e17692c7879da5acdd1f0c674828e518a1a022a59d68de1dbd32c
  HCP_TREE_SITTER_RUNTIME vendor/tree-sitter/lib)
hcp_npm_sources(tree-sitter-bash 0.25.1
  ee1332b6e6083285ceab6e3246e960231b6113d6268206483870b23d34ee25cbba114e78b580fee06dfd7146f6f24c42ea331ffc06cf7d618b42d80f4dd877c7
  HCP_TREE_SITTER_BASH src)
hcp_npm_sources(tree-sitter-python 0.25.0
  782989c7acd06b7e46c5a0ad403fb05c73a162a07110bf9ba7bd56fecddf70332ed3a32bb739155d1e37edd46b0ab6eb0dbc8bb940c9a4083272cee772780b5f
  HCP_TREE_SITTER_PYTHON src)

set(_ts_lib "${HCP_TREE_SITTER_RUNTIME}/vendor/tree-sitter/lib")
add_library(hcp_tree_sitter STATIC
  "${_ts_lib}/src/lib.c"
  "${HCP_TREE_SITTER_BASH}/src/parser.c"
  "${HCP_TREE_SITTER_BASH}/src/scanner.c")
# Each grammar's parser.c and scanner.c include "tree_sitter/parser.h" from their own folder: the Python grammar is
# a library of its own so that each finds its own copy.
add_library(hcp_tree_sitter_python OBJECT
  "${HCP_TREE_SITTER_PYTHON}/src/parser.c"
  "${HCP_TREE_SITTER_PYTHON}/src/scanner.c")
target_include_directories(hcp_tree_sitter_python PRIVATE "${HCP_TREE_SITTER_PYTHON}/src")
set_target_properties(hcp_tree_sitter_python PROPERTIES C_STANDARD 11 C_VISIBILITY_PRESET hidden
                      POSITION_INDEPENDENT_CODE ON)
target_compile_options(hcp_tree_sitter_python PRIVATE -w)
target_sources(hcp_tree_sitter PRIVATE $<TARGET_OBJECTS:hcp_tree_sitter_python>)
target_include_directories(hcp_tree_sitter SYSTEM PUBLIC "${_ts_lib}/include"
                           PRIVATE "${_ts_lib}/src" "${HCP_TREE_SITTER_BASH}/src")
set_target_properties(hcp_tree_sitter PROPERTIES C_STANDARD 11 C_VISIBILITY_PRESET hidden)
# Third-party code: its own warnings are not ours to fix.
target_compile_options(hcp_tree_sitter PRIVATE -w)
target_compile_definitions(hcp_tree_sitter PRIVATE _DEFAULT_SOURCE)
