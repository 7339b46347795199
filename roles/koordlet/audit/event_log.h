// The audit log on disk, as Koordinator lays it out: events appended to <dir>/audit.log, which
// is renamed to audit-<local time>-<n>.log when full; the oldest files go to keep the disk bound.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/expected.h"

namespace koord::roles::koordlet::audit {

/// Koordinator's size of one file.
inline constexpr std::size_t kDefaultMaxFileBytes = std::size_t{2} << 20;

/// Appends lines; thread-safe. Every file stays under fileBytes(), and at most maxFiles() files
/// (audit.log included) are kept, so the log never takes more than the disk bound.
class EventLogWriter {
 public:
  /// `max_disk_bytes` > 0. A file takes kDefaultMaxFileBytes, or half the bound when that is
  /// smaller, so that there is always room for the current file and one rotated file.
  EventLogWriter(std::filesystem::path dir, std::uint64_t max_disk_bytes,
                 std::size_t max_file_bytes = kDefaultMaxFileBytes);
  ~EventLogWriter();
  EventLogWriter(const EventLogWriter&) = delete;
  EventLogWriter& operator=(const EventLogWriter&) = delete;

  /// Appends `line` and a newline in one write, rotating first when it would not fit. Errors
  /// name the file; the next call tries again.
  Expected<void> append(std::string_view line);

  std::size_t fileBytes() const { return file_bytes_; }
  std::size_t maxFiles() const { return max_files_; }

 private:
  Expected<void> openCurrent();
  Expected<void> rotate();
  void prune();

  const std::filesystem::path dir_;
  const std::size_t file_bytes_;
  const std::size_t max_files_;
  std::mutex mu_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

/// The audit files of `dir`, newest first: audit.log, then the rotated files by their time and
/// sequence number. Other names are never listed (nor deleted).
std::vector<std::filesystem::path> auditFilesNewestFirst(const std::filesystem::path& dir);

/// Reads the log backwards, newest line first, across rotations: it follows its file by inode,
/// so a rename under it changes nothing. Holds no descriptor between calls, and at most one line
/// (kMaxEventLineBytes) of buffer. Not thread-safe.
class EventLogCursor {
 public:
  explicit EventLogCursor(std::filesystem::path dir);

  /// Up to `n` lines, newest first (empty and oversized lines are skipped). Fewer means the
  /// oldest line has been read: exhausted() is then true.
  std::vector<std::string> take(std::size_t n);
  bool exhausted() const { return done_; }

 private:
  struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
  };
  bool open();
  bool advance();
  std::optional<std::string> nextLine();
  void close();

  const std::filesystem::path dir_;
  int fd_ = -1;
  bool started_ = false;
  bool done_ = false;
  FileId file_;
  std::uint64_t pos_ = 0;  // bytes [0, pos_) of the file are not read yet
  std::string buffer_;     // read but not yet returned, at most one line
  bool skipping_ = false;  // inside a line longer than kMaxEventLineBytes
};

}  // namespace koord::roles::koordlet::audit
