# `koord version` reports the project version and the git commit. The commit is re-read on every
# build by a tiny script that rewrites version_info.cpp only when it changed, so a new commit
# relinks koord without reconfiguring or recompiling anything else.
set(KOORD_VERSION_CPP ${CMAKE_BINARY_DIR}/generated/version_info.cpp)
add_custom_target(koord_version_info
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUTPUT=${KOORD_VERSION_CPP}
          -DVERSION=${PROJECT_VERSION}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteVersionInfo.cmake
  BYPRODUCTS ${KOORD_VERSION_CPP}
  COMMENT "Checking git commit for koord version"
  VERBATIM)
