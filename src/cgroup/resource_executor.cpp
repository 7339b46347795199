#include "koord/cgroup/resource_executor.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "koord/cgroup/kubepods_path.h"
#include "text_fields.h"
#include "write_failures.h"

namespace koord::cgroup {

namespace fs = std::filesystem;

namespace {

using text::trim;

std::optional<std::int64_t> parseInt(std::string_view s) {
  return text::parseNumber<std::int64_t>(s);
}

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~UniqueFd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// cpu.max is "<quota|max> <period>".
std::pair<std::string, std::string> splitCpuMax(std::string_view content) {
  content = trim(content);
  auto space = content.find(' ');
  if (space == std::string_view::npos)
    return {std::string(content), "100000"};
  return {std::string(content.substr(0, space)), std::string(trim(content.substr(space + 1)))};
}

// The kernel stores memory limits in pages and "no limit" as a huge number (v1) or "max" (v2).
constexpr std::int64_t kPage = 4096;
std::optional<std::int64_t> memoryLimitOf(std::string_view content) {
  content = trim(content);
  if (content == "max" || content == "-1")
    return -1;
  auto v = parseInt(content);
  if (v && *v >= (std::int64_t{1} << 62))
    return -1;
  return v;
}

bool sameValue(Resource r, std::string_view wanted_raw, std::string_view current_raw) {
  if (r == Resource::kMemoryLimit) {
    auto want = memoryLimitOf(wanted_raw);
    auto have = memoryLimitOf(current_raw);
    if (!want || !have)
      return false;
    if (*want < 0 || *have < 0)
      return *want == *have;
    return *want / kPage == *have / kPage;
  }
  return trim(wanted_raw) == trim(current_raw);
}

std::string errnoText(int e) {
  return std::strerror(e);
}

}  // namespace

ResourceExecutor::ResourceExecutor(CgroupRoot root, const Clock& clock)
    : root_(std::move(root)), failures_(std::make_shared<WriteFailures>(clock)) {}

bool isKernelRefusal(const Error& e) {
  return e.code.category() == boost::system::system_category();
}

bool isRefusedWrite(const Error& e) {
  return isKernelRefusal(e) || e.code == rangeRefusal();
}

fs::path ResourceExecutor::pathOf(std::string_view dir, Resource r) const {
  auto file = resourceFile(r, root_.version);
  fs::path p = root_.root;
  if (!file.subsystem.empty())
    p /= file.subsystem;
  return p / dir / file.file;
}

namespace {

// Opens root/<subsystem>/<dir> one component at a time. The root and the subsystem are the
// operator's (often symlinks: cpu -> cpu,cpuacct); every component of `dir` is opened with
// O_NOFOLLOW, so a symlink planted inside the tree ends the walk instead of leaving it.
Expected<UniqueFd> openCgroupDir(const fs::path& root, std::string_view subsystem,
                                 std::string_view dir) {
  if (!validRelativeDir(dir)) {
    return invalidArgument(
        fmt::format("cgroup directory {:?}: not a relative cgroup path", std::string(dir)));
  }
  fs::path base = root;
  if (!subsystem.empty())
    base /= subsystem;
  UniqueFd fd(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0)
    return invalidArgument(fmt::format("open {}: {}", base.string(), errnoText(errno)));
  std::size_t start = 0;
  while (start <= dir.size()) {
    auto slash = dir.find('/', start);
    std::string part(dir.substr(start, slash == std::string_view::npos ? dir.npos : slash - start));
    UniqueFd next(::openat(fd.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      int e = errno;
      struct stat st {};
      bool link =
          ::fstatat(fd.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      return invalidArgument(
          fmt::format("open {}: {}", (base / dir).string(),
                      link ? "a symlink in the cgroup path, not followed" : errnoText(e)));
    }
    fd = std::move(next);
    if (slash == std::string_view::npos)
      break;
    start = slash + 1;
  }
  return fd;
}

// The subsystems' directories (cpu, memory, ... under the cgroup root), opened once: every read
// resolves beneath one of them, found by its path's text (no component-wise comparison on the
// read path). Bounded, since tests make many roots; an entry that stopped resolving (its
// directory removed) is dropped, and the caller's walk by path answers instead.
class BaseDirs {
 public:
  std::shared_ptr<const UniqueFd> get(const fs::path& base) {
    std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first == base.native()) {
        std::rotate(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(i),
                    entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        return entries_.front().second;
      }
    }
    auto fd =
        std::make_shared<const UniqueFd>(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (fd->get() < 0)
      return nullptr;
    if (entries_.size() == kMax)
      entries_.pop_back();
    entries_.emplace(entries_.begin(), base.native(), fd);
    return fd;
  }
  void drop(const fs::path& base) {
    std::lock_guard lock(mu_);
    std::erase_if(entries_, [&](const auto& e) { return e.first == base.native(); });
  }

 private:
  static constexpr std::size_t kMax = 16;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::shared_ptr<const UniqueFd>>> entries_;
};

BaseDirs& baseDirs() {
  static BaseDirs* dirs = new BaseDirs();  // never destroyed: reads may run during static teardown
  return *dirs;
}

// One openat2 call resolves dir/file beneath the subsystem's directory refusing every symlink,
// which is what the walk above checks one component at a time (an open and a close each): the
// koordlet reads a few files per pod every second. On any failure, or a kernel or seccomp
// profile without openat2, the walk runs instead and gives its precise answer.
Expected<UniqueFd> openCgroupFile(const fs::path& root, std::string_view subsystem,
                                  std::string_view dir, std::string_view file, int flags) {
  static std::atomic<bool> no_openat2{false};
  if (!validRelativeDir(dir)) {
    return invalidArgument(
        fmt::format("cgroup directory {:?}: not a relative cgroup path", std::string(dir)));
  }
  if (!no_openat2.load(std::memory_order_relaxed) && file.find('/') == std::string_view::npos) {
    fs::path base = root;
    if (!subsystem.empty())
      base /= subsystem;
    if (auto base_fd = baseDirs().get(base)) {
      std::string rel;
      rel.reserve(dir.size() + file.size() + 1);
      rel.append(dir).append("/").append(file);
      open_how how{};
      how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
      how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
      const long fd = ::syscall(SYS_openat2, base_fd->get(), rel.c_str(), &how, sizeof how);
      if (fd >= 0)
        return UniqueFd(static_cast<int>(fd));
      if (errno == ENOSYS || errno == EPERM)
        no_openat2.store(true, std::memory_order_relaxed);
      else if (struct stat st{}; ::fstat(base_fd->get(), &st) != 0 || st.st_nlink == 0)
        baseDirs().drop(base);
    }
  }
  auto dfd = openCgroupDir(root, subsystem, dir);
  if (!dfd)
    return dfd.error();
  const std::string fname(file);
  UniqueFd fd(::openat(dfd->get(), fname.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0)
    return Error(errnoText(errno),
                 boost::system::error_code(errno, boost::system::system_category()));
  return fd;
}

}  // namespace

Expected<std::vector<std::string>> ResourceExecutor::listChildren(std::string_view dir,
                                                                  Resource r) const {
  auto file = resourceFile(r, root_.version);
  auto dfd = openCgroupDir(root_.root, file.subsystem, dir);
  if (!dfd)
    return dfd.error();
  int fd = ::openat(dfd->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return invalidArgument(
        fmt::format("list {}: {}", (root_.root / file.subsystem / dir).string(), errnoText(errno)));
  }
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return invalidArgument(
        fmt::format("list {}: {}", (root_.root / file.subsystem / dir).string(), errnoText(errno)));
  }
  std::vector<std::string> out;
  while (const dirent* e = ::readdir(d)) {
    std::string_view name(e->d_name);
    if (name == "." || name == "..")
      continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir =
          ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (!is_dir)
      continue;
    std::string child = fmt::format("{}/{}", dir, name);
    if (validRelativeDir(child))
      out.push_back(std::move(child));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool ResourceExecutor::exists(std::string_view dir, Resource r) const {
  return openCgroupFile(root_.root, resourceFile(r, root_.version).subsystem, dir, ".",
                        O_PATH | O_DIRECTORY)
      .has_value();
}

Expected<std::string> ResourceExecutor::readRaw(std::string_view dir,
                                                const ResourceFile& file) const {
  auto shown = [&] { return (root_.root / file.subsystem / dir / file.file).string(); };
  auto opened = openCgroupFile(root_.root, file.subsystem, dir, file.file, O_RDONLY);
  if (!opened) {
    if (opened.error().code.category() != boost::system::system_category())
      return opened.error();
    return invalidArgument(fmt::format("read {}: {}", shown(), opened.error().message));
  }
  UniqueFd fd = std::move(*opened);
  std::string out;
  char buf[4096];
  while (true) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return invalidArgument(fmt::format("read {}: {}", shown(), errnoText(errno)));
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > (1u << 20))
      return invalidArgument(fmt::format("read {}: larger than 1 MiB", shown()));
  }
  return out;
}

Expected<void> ResourceExecutor::writeRaw(std::string_view dir, const ResourceFile& file,
                                          std::string_view value) const {
  // No O_CREAT: a cgroup file that is not there is an error, never a new regular file.
  // The errno is the error's code: write() tells the kernel's refusals from our own checks by it.
  auto refused = [&](int e) {
    return Error(
        fmt::format("write {} = {:?}: {}", (root_.root / file.subsystem / dir / file.file).string(),
                    std::string(value), errnoText(e)),
        boost::system::error_code(e, boost::system::system_category()));
  };
  auto opened = openCgroupFile(root_.root, file.subsystem, dir, file.file, O_WRONLY | O_TRUNC);
  if (!opened) {
    if (opened.error().code.category() != boost::system::system_category())
      return opened.error();
    return refused(opened.error().code.value());
  }
  UniqueFd fd = std::move(*opened);
  auto n = ::write(fd.get(), value.data(), value.size());
  if (n < 0 || static_cast<std::size_t>(n) != value.size())
    return refused(n < 0 ? errno : EIO);
  return {};
}

Expected<std::string> ResourceExecutor::read(std::string_view dir, Resource r) const {
  auto file = resourceFile(r, root_.version);
  auto raw = readRaw(dir, file);
  if (!raw)
    return raw.error();
  auto content = trim(*raw);
  if (root_.version == CgroupVersion::kV1) {
    if (r == Resource::kMemoryLimit) {
      auto limit = memoryLimitOf(content);
      if (limit && *limit < 0)
        return std::string("-1");
    }
    return std::string(content);
  }
  switch (r) {
    case Resource::kCpuShares: {
      auto weight = parseInt(content);
      if (!weight)
        return invalidArgument(fmt::format("read {}: {:?} is not a weight", pathOf(dir, r).string(),
                                           std::string(content)));
      return std::to_string(weightToShares(*weight));
    }
    case Resource::kCpuCfsQuota: {
      auto quota = splitCpuMax(content).first;
      return quota == "max" ? std::string("-1") : quota;
    }
    case Resource::kCpuCfsPeriod:
      return splitCpuMax(content).second;
    case Resource::kMemoryLimit:
      return content == "max" ? std::string("-1") : std::string(content);
    case Resource::kCpuAcctUsage: {
      // usage_usec in cpu.stat, answered in v1's nanoseconds.
      std::string_view rest = content;
      while (!rest.empty()) {
        auto nl = rest.find('\n');
        auto line = rest.substr(0, nl);
        if (line.rfind("usage_usec ", 0) == 0) {
          auto v = parseInt(trim(line.substr(11)));
          if (v)
            return std::to_string(*v * 1000);
        }
        if (nl == std::string_view::npos)
          break;
        rest = rest.substr(nl + 1);
      }
      return invalidArgument(fmt::format("read {}: no usage_usec", pathOf(dir, r).string()));
    }
    default:
      return std::string(content);
  }
}

Expected<WriteOutcome> ResourceExecutor::write(std::string_view dir, Resource r,
                                               std::string_view value) {
  if (!validRelativeDir(dir)) {
    return invalidArgument(
        fmt::format("cgroup directory {:?}: not a relative cgroup path", std::string(dir)));
  }
  const auto file = resourceFile(r, root_.version);
  auto valid = validateValue(r, value);
  if (!valid) {
    // Counted and backed off as the kernel's refusals are: a reconciler that computes a bad
    // value computes it again every round, and an operator should see that in the metric.
    const std::string path = pathOf(dir, r).string();
    if (auto admitted = failures_->admit(path, value); !admitted)
      return admitted.error();
    failures_->outOfRange(path, file.file, value, valid.error().message);
    return Error(valid.error().message, rangeRefusal());
  }
  // Read first: the current content both decides "unchanged" and, for v2's cpu.max, supplies
  // the half of the file this write does not change.
  auto current = readRaw(dir, file);
  if (!current)
    return current.error();
  std::string raw = *valid;
  if (root_.version == CgroupVersion::kV2) {
    auto parsed = parseInt(*valid);
    switch (r) {
      case Resource::kCpuShares:
        raw = std::to_string(sharesToWeight(parsed.value_or(2)));
        break;
      case Resource::kCpuCfsQuota:
        raw = fmt::format("{} {}", *valid == "-1" ? "max" : *valid, splitCpuMax(*current).second);
        break;
      case Resource::kCpuCfsPeriod:
        raw = fmt::format("{} {}", splitCpuMax(*current).first, *valid);
        break;
      case Resource::kMemoryLimit:
        raw = *valid == "-1" ? "max" : *valid;
        break;
      default:
        break;
    }
  }
  if (sameValue(r, raw, *current))
    return WriteOutcome::kUnchanged;
  const std::string path = pathOf(dir, r).string();
  if (auto admitted = failures_->admit(path, raw); !admitted)
    return admitted.error();
  auto written = writeRaw(dir, file, raw);
  if (!written) {
    if (isKernelRefusal(written.error()))
      failures_->refused(path, file.file, raw, written.error().code.value());
    return written.error();
  }
  failures_->succeeded(path);
  return WriteOutcome::kWritten;
}

}  // namespace koord::cgroup
