// A file's permission bits and a umask set for one scope, for tests of the modes koord creates
// sockets and files with whatever the process umask.
#pragma once

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <string>

namespace koord::testing {

/// The permission bits (and setuid, setgid, sticky) of `path`; fails the test when it is gone.
inline unsigned modeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

/// Restores the umask however the test ends.
struct ScopedUmask {
  explicit ScopedUmask(mode_t mask) : old(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;
  mode_t old;
};

}  // namespace koord::testing
