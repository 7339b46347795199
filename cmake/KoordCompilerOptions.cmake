# Compiler settings shared by every koord target: C++20, strict warnings, optional sanitizers,
# ccache when present. Targets opt in with koord_target_defaults(<target>).
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
set(CMAKE_POSITION_INDEPENDENT_CODE OFF)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(KOORD_CCACHE ccache)
if(KOORD_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KOORD_CCACHE})
endif()

set(KOORD_WARNINGS -Wall -Wextra -Wpedantic -Wno-unused-parameter)
if(KOORD_WERROR)
  list(APPEND KOORD_WARNINGS -Werror)
endif()

if(KOORD_SANITIZE)
  # ASan's instrumentation defeats GCC 12's flow analysis: -Wmaybe-uninitialized then fires inside
  # libstdc++ (std::function in std::regex) on code that is fine. Plain builds keep the warning.
  list(APPEND KOORD_WARNINGS -Wno-maybe-uninitialized)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  # -O1 and line tables only: ASan's own advice, and on the 2-core CI machine about 40 % less
  # compile time than -O2 -g for a test build whose speed comes from I/O, not codegen.
  if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g1 -DNDEBUG")
  endif()
  add_link_options(-fsanitize=address,undefined)
endif()

if(KOORD_TSAN)
  # One runtime per process: ASan and TSan each claim the shadow memory and intercept the same
  # calls, so GCC refuses them together anyway; say why at configure time instead.
  if(KOORD_SANITIZE)
    message(FATAL_ERROR "KOORD_TSAN=ON cannot be combined with KOORD_SANITIZE=ON (ASan/UBSan); "
                        "configure a tree of its own with KOORD_SANITIZE=OFF")
  endif()
  if(KOORD_FUZZ)
    message(FATAL_ERROR "KOORD_TSAN=ON cannot be combined with KOORD_FUZZ=ON (ASan/UBSan)")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  # Boost.Asio brackets each handler call with std::atomic_thread_fence, which TSan cannot model
  # (GCC's -Wtsan says so, an error here). The handoff of a handler between threads is ordered by
  # the scheduler's and strands' mutexes, which TSan does see. Without the fences, -Wtsan stays
  # on for a fence in koord's own code.
  add_compile_definitions(BOOST_ASIO_DISABLE_FENCED_BLOCK)
  # -O1 with line tables, as for ASan: the reports keep their file:line, the build stays cheap.
  if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g1 -DNDEBUG")
  endif()
  add_link_options(-fsanitize=thread)
endif()

# A PIE's relative relocations packed as DT_RELR (glibc 2.36, binutils 2.38): the table the loader
# reads at every start, and which stays resident in every process, shrinks to a few KiB.
include(CheckLinkerFlag)
check_linker_flag(CXX "-Wl,-z,pack-relative-relocs" KOORD_LINKER_HAS_RELR)
if(KOORD_LINKER_HAS_RELR)
  add_link_options(-Wl,-z,pack-relative-relocs)
endif()

# Boost.Asio: no deprecated interfaces.
add_compile_definitions(BOOST_ASIO_NO_DEPRECATED)

function(koord_target_defaults target)
  target_compile_options(${target} PRIVATE ${KOORD_WARNINGS})
endfunction()
