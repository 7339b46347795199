// Resctrl (Intel RDT / AMD PQoS) policy without I/O: the LSR, LS and BE groups Koordinator keeps
// under /sys/fs/resctrl, each class's resctrlQOS from the NodeSLO, its L3 CAT mask and MBA value,
// and the text formats of the kernel's schemata, tasks and mon_data files.
#pragma once

#include <boost/json/fwd.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// The control groups Koordinator creates directly under the resctrl root, in its order.
enum class ResctrlGroup : std::uint8_t { kLSR, kLS, kBE };
inline constexpr std::array<ResctrlGroup, 3> kResctrlGroups = {
    ResctrlGroup::kLSR, ResctrlGroup::kLS, ResctrlGroup::kBE};

/// "LSR", "LS", "BE": the group's directory name and its qos label in the metrics.
std::string_view resctrlGroupName(ResctrlGroup g);
/// The group a pod's QoS class (with Kubernetes QoS default) is placed in: LSE and LSR share
/// LSR; SYSTEM and no class have none.
std::optional<ResctrlGroup> resctrlGroupOf(apis::QoSClass qos);

/// One class's resctrlQOS as the koordlet applies it. A class with enable false gets
/// Koordinator's "none" values (the whole cache, full bandwidth) and no tasks.
struct ResctrlClassQOS {
  bool enable = false;
  std::int64_t cat_start_percent = 0;
  std::int64_t cat_end_percent = 100;
  /// 0 is accepted (the schema's minimum) but leaves the group's MB line alone, as Koordinator
  /// refuses to compute a bandwidth of 0.
  std::int64_t mba_percent = 100;
  friend bool operator==(const ResctrlClassQOS&, const ResctrlClassQOS&) = default;
};

struct ResctrlQOSStrategy {
  std::array<ResctrlClassQOS, 3> groups;
  const ResctrlClassQOS& of(ResctrlGroup g) const { return groups[static_cast<std::size_t>(g)]; }
};

/// Decodes resourceQOSStrategy.{lsrClass,lsClass,beClass}.resctrlQOS. Absent fields take
/// Koordinator's defaults (enable false; CAT 0-100 for LSR and LS, 0-30 for BE; MBA 100). Errors
/// name the field: a JSON type other than Go's, a percent outside 0..100, a start not below the
/// end (the API's ltfield rule).
kube::Expected<ResctrlQOSStrategy> decodeResctrlQOSStrategy(
    const boost::json::object& resource_qos_strategy);

/// info/L3/cbm_mask: hex, non-zero, its ones contiguous from bit 0 (the root's mask is the whole
/// cache), at most 64 bits.
kube::Expected<std::uint64_t> parseCbmMask(std::string_view text);

/// The L3 mask for [start%, end%) of the cache ways (Koordinator's CalculateCatL3MaskValue: each
/// bound rounded up to a whole way). koord widens a range that rounds to fewer than
/// `min_cbm_bits` ways upwards (downwards at the top of the cache), since the kernel refuses
/// such a mask. Errors: a bad cbm, start/end outside 0..100 or not ordered, a cache with fewer
/// ways than min_cbm_bits.
kube::Expected<std::uint64_t> catL3Mask(std::uint64_t cbm, int min_cbm_bits,
                                        std::int64_t start_percent, std::int64_t end_percent);

/// The CPU vendor decides the MB unit: Intel takes a percentage, AMD a bandwidth in 1/8 GB/s.
enum class CpuVendor : std::uint8_t { kIntel, kAMD };
/// "AuthenticAMD" is AMD; everything else is treated as Intel, as Koordinator does.
CpuVendor cpuVendorOf(std::string_view vendor_id);

/// The MB schemata value for `percent`: Intel rounds up to a multiple of 10; AMD writes 2048
/// (unlimited) for 100 and otherwise percent of 160 (25 GB/s x 8 x 0.8, Koordinator's measured
/// per-CCD figure). nullopt for a percent outside 1..100.
std::optional<std::int64_t> mbaValue(std::int64_t percent, CpuVendor vendor);

/// The per-cache-id values of a schemata file. Lines other than L3 and MB (L2, MPAM's) are
/// ignored; a malformed entry of an L3 or MB line is an error, as is an id past kMaxCacheIds.
struct ResctrlSchemata {
  std::map<int, std::uint64_t> l3;
  std::map<int, std::int64_t> mb;
};
inline constexpr int kMaxCacheIds = 4096;
kube::Expected<ResctrlSchemata> parseResctrlSchemata(std::string_view text);

/// "L3:0=3f;1=3f" and "MB:0=100;1=100" (no newline): the same value for every id.
std::string formatL3Line(const std::vector<int>& ids, std::uint64_t mask);
std::string formatMBLine(const std::vector<int>& ids, std::int64_t value);
/// Whether `current` already holds `mask` (or `value`) for exactly these ids.
bool l3Matches(const ResctrlSchemata& current, const std::vector<int>& ids, std::uint64_t mask);
bool mbMatches(const ResctrlSchemata& current, const std::vector<int>& ids, std::int64_t value);

/// A tasks or cgroup.threads file: one decimal thread id a line. Errors name the bad line;
/// more than `max_count` ids is an error too.
kube::Expected<std::vector<std::int32_t>> parseTaskIds(std::string_view text,
                                                       std::size_t max_count);

/// The cache id of a mon_data domain directory ("mon_L3_00" -> 0); nullopt for other names.
std::optional<int> monDomainCacheId(std::string_view dir_name);

}  // namespace koord::roles::koordlet::qosmanager
