#include "audit/event_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "audit/audit_event.h"
#include "koord/core/log.h"

namespace koord::roles::koordlet::audit {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCurrentName = "audit.log";
constexpr std::size_t kChunkBytes = 4096;
// A rotated file's sequence number within one second; past it rotation gives up (the disk bound
// would be gone long before).
constexpr int kMaxSequence = 999;

// "audit-2006-01-02-15-04-05-<n>.log" -> (time text, n); nullopt for any other name.
std::optional<std::pair<std::string, int>> rotatedKey(std::string_view name) {
  constexpr std::string_view kPrefix = "audit-";
  constexpr std::string_view kSuffix = ".log";
  constexpr std::size_t kTimeLen = 19;
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix))
    return std::nullopt;
  std::string_view middle =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (middle.size() < kTimeLen + 2 || middle[kTimeLen] != '-')
    return std::nullopt;
  for (std::size_t i = 0; i < kTimeLen; ++i) {
    const bool dash = i == 4 || i == 7 || i == 10 || i == 13 || i == 16;
    if (dash ? middle[i] != '-' : (middle[i] < '0' || middle[i] > '9'))
      return std::nullopt;
  }
  std::string_view seq = middle.substr(kTimeLen + 1);
  if (seq.empty() || seq.size() > 3)
    return std::nullopt;
  int n = 0;
  for (char c : seq) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return std::make_pair(std::string(middle.substr(0, kTimeLen)), n);
}

std::string localTimeStamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02}-{:02}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

Error fileError(const fs::path& path, std::string_view what, int err) {
  return invalidArgument(
      fmt::format("{}: {}: {}", path.string(), what, std::generic_category().message(err)));
}

std::vector<fs::path> rotatedNewestFirst(const fs::path& dir) {
  std::vector<std::pair<std::pair<std::string, int>, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (auto key = rotatedKey(it->path().filename().string()))
      found.emplace_back(std::move(*key), it->path());
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<fs::path> out;
  out.reserve(found.size());
  for (auto& [key, path] : found)
    out.push_back(std::move(path));
  return out;
}

}  // namespace

std::vector<fs::path> auditFilesNewestFirst(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (fs::is_regular_file(dir / kCurrentName, ec))
    out.push_back(dir / kCurrentName);
  for (auto& path : rotatedNewestFirst(dir))
    out.push_back(std::move(path));
  return out;
}

EventLogWriter::EventLogWriter(fs::path dir, std::uint64_t max_disk_bytes,
                               std::size_t max_file_bytes)
    : dir_(std::move(dir)),
      file_bytes_(
          static_cast<std::size_t>(std::min<std::uint64_t>(max_file_bytes, max_disk_bytes / 2))),
      max_files_(static_cast<std::size_t>(
          std::max<std::uint64_t>(2, file_bytes_ == 0 ? 2 : max_disk_bytes / file_bytes_))) {
  if (file_bytes_ < kMaxEventLineBytes)
    throw std::invalid_argument(fmt::format(
        "audit log: a disk bound of {} bytes leaves no room for an event", max_disk_bytes));
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("audit log: cannot create {}: {}", dir_.string(), ec.message()));
  // A smaller bound than the last run's takes effect at once.
  prune();
}

EventLogWriter::~EventLogWriter() {
  if (fd_ >= 0)
    ::close(fd_);
}

Expected<void> EventLogWriter::openCurrent() {
  const fs::path path = dir_ / kCurrentName;
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0)
    return fileError(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    return fileError(path, "cannot stat", err);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  return {};
}

Expected<void> EventLogWriter::rotate() {
  ::close(fd_);
  fd_ = -1;
  const std::string stamp = localTimeStamp();
  fs::path target;
  std::error_code ec;
  for (int n = 0; n <= kMaxSequence; ++n) {
    fs::path candidate = dir_ / fmt::format("audit-{}-{}.log", stamp, n);
    if (!fs::exists(candidate, ec)) {
      target = std::move(candidate);
      break;
    }
  }
  if (target.empty())
    return invalidArgument(fmt::format("{}: no free name to rotate audit.log to", dir_.string()));
  const fs::path current = dir_ / kCurrentName;
  if (::rename(current.c_str(), target.c_str()) != 0)
    return fileError(current, fmt::format("cannot rename to {}", target.filename().string()),
                     errno);
  prune();
  return openCurrent();
}

void EventLogWriter::prune() {
  const std::vector<fs::path> rotated = rotatedNewestFirst(dir_);
  // audit.log is one of the max_files_.
  for (std::size_t i = max_files_ - 1; i < rotated.size(); ++i) {
    if (::unlink(rotated[i].c_str()) != 0 && errno != ENOENT) {
      KOORD_LOG_ERROR("audit log: cannot remove {}: {}", rotated[i].string(),
                      std::generic_category().message(errno));
      continue;
    }
    KOORD_VLOG(2, "audit log: removed {}", rotated[i].string());
  }
}

Expected<void> EventLogWriter::append(std::string_view line) {
  std::string record;
  record.reserve(line.size() + 1);
  record.append(line);
  record.push_back('\n');
  std::lock_guard lock(mu_);
  if (fd_ < 0) {
    if (auto opened = openCurrent(); !opened)
      return opened;
  }
  if (size_ > 0 && size_ + record.size() > file_bytes_) {
    if (auto rotated = rotate(); !rotated)
      return rotated;
  }
  std::size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fileError(dir_ / kCurrentName, "write failed", errno);
    done += static_cast<std::size_t>(n);
    size_ += static_cast<std::uint64_t>(n);
  }
  return {};
}

EventLogCursor::EventLogCursor(fs::path dir) : dir_(std::move(dir)) {}

bool EventLogCursor::open() {
  const std::vector<fs::path> files = auditFilesNewestFirst(dir_);
  for (const fs::path& path : files) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      continue;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      continue;
    }
    if (!started_) {
      // The newest file, from its end as it is now: what is appended later is not this read's.
      started_ = true;
      file_ = {st.st_dev, st.st_ino};
      pos_ = static_cast<std::uint64_t>(st.st_size);
    } else if (st.st_dev != file_.dev || st.st_ino != file_.ino) {
      ::close(fd);
      continue;
    }
    if (pos_ > static_cast<std::uint64_t>(st.st_size)) {
      // Truncated under us (not by the writer, which only appends): what was there is gone.
      ::close(fd);
      return false;
    }
    fd_ = fd;
    return true;
  }
  return false;
}

bool EventLogCursor::advance() {
  const std::vector<fs::path> files = auditFilesNewestFirst(dir_);
  bool current_seen = false;
  for (const fs::path& path : files) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      continue;
    if (current_seen) {
      file_ = {st.st_dev, st.st_ino};
      pos_ = static_cast<std::uint64_t>(st.st_size);
      buffer_.clear();
      skipping_ = false;
      return true;
    }
    current_seen = st.st_dev == file_.dev && st.st_ino == file_.ino;
  }
  // The current file was the oldest, or was removed with everything older.
  return false;
}

void EventLogCursor::close() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

std::optional<std::string> EventLogCursor::nextLine() {
  std::string chunk;
  while (true) {
    if (const auto nl = buffer_.rfind('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(nl + 1);
      buffer_.resize(nl);
      if (skipping_) {
        // The first part of the oversized line.
        skipping_ = false;
        continue;
      }
      if (!line.empty() && line.size() <= kMaxEventLineBytes)
        return line;
      continue;
    }
    if (pos_ == 0) {
      std::string line = std::move(buffer_);
      buffer_.clear();
      const bool skipped = skipping_;
      skipping_ = false;
      if (skipped || line.empty() || line.size() > kMaxEventLineBytes)
        return std::nullopt;
      return line;
    }
    if (buffer_.size() > kMaxEventLineBytes) {
      skipping_ = true;
      buffer_.clear();
    }
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, pos_));
    chunk.resize(n);
    const ssize_t got = ::pread(fd_, chunk.data(), n, static_cast<off_t>(pos_ - n));
    if (got < 0 && errno == EINTR)
      continue;
    if (got != static_cast<ssize_t>(n)) {
      KOORD_VLOG(4, "audit log: read in {} failed; the older events are not read", dir_.string());
      pos_ = 0;
      buffer_.clear();
      return std::nullopt;
    }
    pos_ -= n;
    buffer_.insert(0, chunk);
  }
}

std::vector<std::string> EventLogCursor::take(std::size_t n) {
  std::vector<std::string> lines;
  while (lines.size() < n && !done_) {
    if (fd_ < 0 && !open()) {
      done_ = true;
      break;
    }
    if (auto line = nextLine()) {
      lines.push_back(std::move(*line));
      continue;
    }
    close();
    if (!advance())
      done_ = true;
  }
  close();
  return lines;
}

}  // namespace koord::roles::koordlet::audit
