#include "qosmanager/cgreconcile/memory_qos_apply.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "qosmanager/cgreconcile/memory_qos_files.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

// v1 prints "no limit" as the largest page multiple below 2^63; anything this large is one.
constexpr std::int64_t kHugeBytes = std::int64_t{1} << 62;

std::optional<std::int64_t> parseCurrent(std::string_view text, bool bytes) {
  if (bytes && text == "max")
    return kMemoryUnlimited;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  if (bytes && v >= kHugeBytes)
    return kMemoryUnlimited;
  return v;
}

class Applier {
 public:
  Applier(const std::vector<cgroup::Resource>& skip, std::int64_t page_size,
          cgroup::ResourceExecutor& cgroups)
      : skip_(skip), page_(std::max<std::int64_t>(1, page_size)), cgroups_(cgroups) {}

  // Writes v when it is above the file's (raise) or differs from it at all.
  void apply(const MemoryCgroupValue& v, bool raise_only) {
    if (std::find(skip_.begin(), skip_.end(), v.resource) != skip_.end())
      return;
    if (!present(v.dir)) {
      if (!raise_only)
        ++stats_.absent;  // counted in the last pass that sees it
      return;
    }
    const bool bytes = hierarchicalMemoryResource(v.resource);
    auto text = cgroups_.read(v.dir, v.resource);
    if (!text) {
      stats_.errors.push_back(text.error().message);
      return;
    }
    auto current = parseCurrent(*text, bytes);
    if (current) {
      const int order = compare(v.value, *current, bytes);
      if (order == 0 || (raise_only && order < 0)) {
        if (order == 0 && !raise_only)
          ++stats_.unchanged;
        return;
      }
    }
    const std::string value =
        v.value == kMemoryUnlimited && bytes ? std::string("max") : std::to_string(v.value);
    auto written = cgroups_.write(v.dir, v.resource, value);
    if (!written) {
      // Refusals (the kernel's, the range check's) are logged and counted by the executor.
      if (!cgroup::isRefusedWrite(written.error()))
        stats_.errors.push_back(written.error().message);
      return;
    }
    if (*written == cgroup::WriteOutcome::kWritten)
      ++stats_.written;
    else if (!raise_only)
      ++stats_.unchanged;
  }

  MemoryQOSApplyStats take() { return std::move(stats_); }

 private:
  int compare(std::int64_t want, std::int64_t current, bool bytes) const {
    if (bytes && want != kMemoryUnlimited && current != kMemoryUnlimited) {
      want /= page_;
      current /= page_;
    }
    return (want > current) - (want < current);
  }

  bool present(const std::string& dir) {
    auto [it, inserted] = dirs_.try_emplace(dir, false);
    if (inserted)
      it->second = cgroups_.exists(dir, cgroup::Resource::kMemoryMin);
    return it->second;
  }

  const std::vector<cgroup::Resource>& skip_;
  std::int64_t page_;
  cgroup::ResourceExecutor& cgroups_;
  std::unordered_map<std::string, bool> dirs_;
  MemoryQOSApplyStats stats_;
};

}  // namespace

MemoryQOSApplyStats applyMemoryQOSPlan(const MemoryQOSPlan& plan,
                                       const std::vector<cgroup::Resource>& skip,
                                       std::int64_t page_size, cgroup::ResourceExecutor& cgroups) {
  Applier applier(skip, page_size, cgroups);
  for (const auto& level : plan.levels) {
    for (const auto& v : level)
      applier.apply(v, hierarchicalMemoryResource(v.resource));
  }
  for (auto level = plan.levels.rbegin(); level != plan.levels.rend(); ++level) {
    for (const auto& v : *level) {
      if (hierarchicalMemoryResource(v.resource))
        applier.apply(v, false);
    }
  }
  return applier.take();
}

}  // namespace koord::roles::koordlet::qosmanager
