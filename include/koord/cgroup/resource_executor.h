// Validated reads and writes of the table's cgroup files under one root: no path outside the
// root (no "..", no symlink followed), no value out of range, no write of an unchanged value.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/cgroup_version.h"
#include "koord/core/clock.h"
#include "koord/core/expected.h"

namespace koord::cgroup {

/// Where the cgroups are and how they are laid out; `root` is -cgroup-root-dir.
struct CgroupRoot {
  std::filesystem::path root;
  CgroupVersion version = CgroupVersion::kV1;
  CgroupDriver driver = CgroupDriver::kCgroupfs;
};

enum class WriteOutcome { kWritten, kUnchanged };

class WriteFailures;

/// Whether a write failed because the kernel refused it (its code is the errno).
bool isKernelRefusal(const Error& e);
/// Whether a write was refused, by the kernel or by the range check. The executor has logged and
/// counted such a failure already, so a caller need not log it again.
bool isRefusedWrite(const Error& e);

class ResourceExecutor {
 public:
  /// Copies share one record of refused writes (see write()).
  explicit ResourceExecutor(CgroupRoot root, const Clock& clock = Clock::real());

  const CgroupRoot& root() const { return root_; }

  /// Writes `value` (in v1 terms, see validateValue) to `r` of cgroup `dir` (relative, as
  /// kubepods_path builds it). The directory is walked one component at a time with
  /// O_NOFOLLOW from the root, so neither ".." nor a symlink planted in the tree can lead out of
  /// it. A value equal to what the file holds is not written again. Errors name the file and the
  /// value. A value the kernel or the range check refused is logged once per run of refusals of
  /// that file, counted in koordlet_cgroup_write_errors_total{file,errno} (errno "range" for the
  /// range check's), and not tried again before a backoff (1 s doubling to 5 min) has passed; a
  /// different value is tried at once.
  Expected<WriteOutcome> write(std::string_view dir, Resource r, std::string_view value);

  /// The file's content in v1 terms (cpu.weight read back as shares, cpu.max split into quota
  /// and period, "max" as -1), trimmed.
  Expected<std::string> read(std::string_view dir, Resource r) const;

  /// The child cgroups of `dir` (under the resource's subsystem for v1), as relative directories
  /// ("kubepods/besteffort/pod<uid>"), sorted; entries that are not directories or whose names
  /// fall outside the relative-directory grammar are skipped.
  Expected<std::vector<std::string>> listChildren(std::string_view dir, Resource r) const;

  /// Whether the cgroup directory exists (for v1, under the resource's subsystem).
  bool exists(std::string_view dir, Resource r) const;

  /// The absolute path of `r` in `dir`, for messages and for tests.
  std::filesystem::path pathOf(std::string_view dir, Resource r) const;

 private:
  Expected<std::string> readRaw(std::string_view dir, const ResourceFile& file) const;
  Expected<void> writeRaw(std::string_view dir, const ResourceFile& file,
                          std::string_view value) const;

  CgroupRoot root_;
  std::shared_ptr<WriteFailures> failures_;
};

}  // namespace koord::cgroup
