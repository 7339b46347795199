// BlkIOReconcile's policy without I/O: resourceQOSStrategy.<class>.blkioQOS and a pod's
// koordinator.sh/blkioQOS decoded, with Koordinator's defaults and the API's bounds.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// The pod annotation that carries a pod's own blocks ({"blocks": [...]}).
inline constexpr std::string_view kAnnotationPodBlkIOQOS = "koordinator.sh/blkioQOS";

/// Bounds on what a NodeSLO or an annotation may ask for: blocks per class or pod, bytes of a
/// block's name.
inline constexpr std::size_t kMaxBlkIOBlocks = 64;
inline constexpr std::size_t kMaxBlockNameBytes = 1024;

/// device: a block device by path (/dev/sdb); podvolume: a volume of the pod (its annotation
/// only); volumegroup: an LVM volume group.
enum class BlockType : std::uint8_t { kDevice, kPodVolume, kVolumeGroup };
/// "device", "podvolume", "volumegroup".
std::string_view blockTypeName(BlockType t);

/// A block's ioCfg with Koordinator's defaults for what is absent: no throttle (0), weight 100,
/// latency targets 3000 us at the 95th percentile, the kernel's own cost model.
struct BlkIOConfig {
  std::int64_t read_iops = 0;
  std::int64_t write_iops = 0;
  std::int64_t read_bps = 0;
  std::int64_t write_bps = 0;
  std::int64_t io_weight_percent = 100;
  std::int64_t read_latency = 3000;
  std::int64_t write_latency = 3000;
  std::int64_t read_latency_percent = 95;
  std::int64_t write_latency_percent = 95;
  /// When set, every model* field is present (>= 1).
  bool enable_user_model = false;
  std::int64_t model_read_bps = 0;
  std::int64_t model_write_bps = 0;
  std::int64_t model_read_seq_iops = 0;
  std::int64_t model_write_seq_iops = 0;
  std::int64_t model_read_rand_iops = 0;
  std::int64_t model_write_rand_iops = 0;
  friend bool operator==(const BlkIOConfig&, const BlkIOConfig&) = default;
};

struct BlockConfig {
  std::string name;
  BlockType type = BlockType::kDevice;
  BlkIOConfig io;
  friend bool operator==(const BlockConfig&, const BlockConfig&) = default;
};

/// One class's blkioQOS.
struct BlkIOClass {
  /// The class has a blkioQOS section: without one Koordinator leaves the class's cgroups as
  /// they are.
  bool configured = false;
  bool enable = false;
  std::vector<BlockConfig> blocks;
  /// What a round applies: the blocks when enabled; none when disabled, so that every device
  /// the cgroup's files name is reset (Koordinator's rule).
  std::vector<BlockConfig> applied() const { return enable ? blocks : std::vector<BlockConfig>(); }
};

struct BlkIOQOSStrategy {
  BlkIOClass lsr;
  BlkIOClass ls;
  BlkIOClass be;
  /// cgroupRoot: blk-iocost's latency QoS and cost model of each disk.
  BlkIOClass root;
};

/// Decodes resourceQOSStrategy.{lsrClass,lsClass,beClass,cgroupRoot}.blkioQOS. Errors name the
/// field: a JSON type other than Go's, a value outside the API's bounds (throttles >= 0,
/// ioWeightPercent 1..100, latency percents 0..100, latencies >= 0, model values >= 1), a block
/// without a name or with an unknown type, more than kMaxBlkIOBlocks blocks, enableUserModel
/// without all six model values.
kube::Expected<BlkIOQOSStrategy> decodeBlkIOQOSStrategy(
    const boost::json::object& resource_qos_strategy);

/// A pod's koordinator.sh/blkioQOS: its blocks; "" is no blocks (the pod's devices reset, as in
/// Koordinator). Errors as decodeBlkIOQOSStrategy's, or for text that is not a JSON object.
kube::Expected<std::vector<BlockConfig>> decodePodBlkIOQOS(std::string_view annotation);

}  // namespace koord::roles::koordlet::qosmanager
