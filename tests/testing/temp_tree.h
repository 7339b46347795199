// A throw-away directory tree for tests that read or write files (fake cgroup, /proc and /sys
// trees): created under $TMPDIR, removed with everything in it when the object goes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace koord::testing {

class TempTree {
 public:
  explicit TempTree(std::string_view prefix = "koord-tree");
  ~TempTree();
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path path(std::string_view relative) const { return root_ / relative; }

  /// Writes `content` to root/relative, creating the parent directories.
  void write(std::string_view relative, std::string_view content) const;
  /// The file's content; empty when it does not exist.
  std::string read(std::string_view relative) const;
  void mkdirs(std::string_view relative) const;
  /// root/relative becomes a symlink to `target` (absolute or relative, as given).
  void symlink(std::string_view relative, const std::filesystem::path& target) const;

 private:
  std::filesystem::path root_;
};

}  // namespace koord::testing
