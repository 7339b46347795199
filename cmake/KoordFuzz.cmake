# KOORD_FUZZ=ON: a libFuzzer build tree (tests/fuzz, docs/fuzzing.md). Every koord library is
# compiled with coverage instrumentation and ASan/UBSan so a fuzz target sees into the parser it
# calls; only the targets link libFuzzer's main. GCC has no libFuzzer, so this needs clang, and it
# is meant for a tree of its own (build-fuzz): the instrumentation must not reach the GCC builds.
if(NOT KOORD_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "KOORD_FUZZ=ON needs clang (CXX=clang++-14), not ${CMAKE_CXX_COMPILER_ID}")
endif()
if(KOORD_SANITIZE)
  message(FATAL_ERROR "KOORD_FUZZ=ON brings its own sanitizers; configure it with KOORD_SANITIZE=OFF")
endif()
# UBSan findings must abort, or libFuzzer would go on past them and never save a reproducer.
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
  -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined)
# -O1 with line tables: fast enough to execute, cheap to compile on the 2-core CI machine.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g1 -DNDEBUG")
