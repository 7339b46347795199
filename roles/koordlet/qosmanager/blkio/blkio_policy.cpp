#include "qosmanager/blkio/blkio_policy.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <limits>
#include <optional>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "qosmanager/framework/resource_qos_strategy.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::indexPath;

namespace {

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

// Reads one optional bounded integer into `out` (left at its default when absent).
struct IntReader {
  const json::object& o;
  const std::string& path;
  std::optional<kube::Error> error;

  bool read(std::string_view name, std::int64_t min, std::int64_t max, std::int64_t& out) {
    if (error)
      return false;
    auto v = boundedIntField(o, name, path, min, max);
    if (!v) {
      error = v.error();
      return false;
    }
    if (*v)
      out = **v;
    return v->has_value();
  }
};

kube::Expected<BlkIOConfig> decodeIOCfg(const json::object& o, const std::string& path) {
  BlkIOConfig io;
  IntReader r{o, path, std::nullopt};
  r.read("readIOPS", 0, kMaxInt, io.read_iops);
  r.read("writeIOPS", 0, kMaxInt, io.write_iops);
  r.read("readBPS", 0, kMaxInt, io.read_bps);
  r.read("writeBPS", 0, kMaxInt, io.write_bps);
  r.read("ioWeightPercent", 1, 100, io.io_weight_percent);
  r.read("readLatency", 0, kMaxInt, io.read_latency);
  r.read("writeLatency", 0, kMaxInt, io.write_latency);
  r.read("readLatencyPercent", 0, 100, io.read_latency_percent);
  r.read("writeLatencyPercent", 0, 100, io.write_latency_percent);
  if (r.error)
    return *r.error;
  auto user = kube::jsonfields::boolField(o, "enableUserModel", path);
  if (!user)
    return user.error();
  io.enable_user_model = *user;
  const std::pair<std::string_view, std::int64_t*> model[] = {
      {"modelReadBPS", &io.model_read_bps},
      {"modelWriteBPS", &io.model_write_bps},
      {"modelReadSeqIOPS", &io.model_read_seq_iops},
      {"modelWriteSeqIOPS", &io.model_write_seq_iops},
      {"modelReadRandIOPS", &io.model_read_rand_iops},
      {"modelWriteRandIOPS", &io.model_write_rand_iops},
  };
  for (auto [name, out] : model) {
    const bool present = r.read(name, 1, kMaxInt, *out);
    if (r.error)
      return *r.error;
    // The kernel takes a user model only whole; Koordinator would write 0s it then refuses.
    if (io.enable_user_model && !present) {
      return kube::makeKubeError(
          fmt::format("{}: required when enableUserModel is true", childPath(path, name)));
    }
  }
  return io;
}

kube::Expected<BlockConfig> decodeBlock(const json::object& o, const std::string& path) {
  BlockConfig block;
  auto name = kube::jsonfields::stringField(o, "name", path);
  if (!name)
    return name.error();
  if (name->empty())
    return kube::makeKubeError(fmt::format("{}: required", childPath(path, "name")));
  if (name->size() > kMaxBlockNameBytes) {
    return kube::makeKubeError(
        fmt::format("{}: longer than {} bytes", childPath(path, "name"), kMaxBlockNameBytes));
  }
  block.name = std::move(*name);
  auto type = kube::jsonfields::stringField(o, "type", path);
  if (!type)
    return type.error();
  if (*type == blockTypeName(BlockType::kDevice)) {
    block.type = BlockType::kDevice;
  } else if (*type == blockTypeName(BlockType::kPodVolume)) {
    block.type = BlockType::kPodVolume;
  } else if (*type == blockTypeName(BlockType::kVolumeGroup)) {
    block.type = BlockType::kVolumeGroup;
  } else {
    return kube::makeKubeError(fmt::format("{}: must be device, podvolume or volumegroup, got {:?}",
                                           childPath(path, "type"), type->substr(0, 64)));
  }
  auto io = kube::jsonfields::objectField(o, "ioCfg", path);
  if (!io)
    return io.error();
  if (*io != nullptr) {
    auto decoded = decodeIOCfg(**io, childPath(path, "ioCfg"));
    if (!decoded)
      return decoded.error();
    block.io = *decoded;
  }
  return block;
}

kube::Expected<std::vector<BlockConfig>> decodeBlocks(const json::object& o,
                                                      const std::string& path) {
  const std::string blocks_path = childPath(path, "blocks");
  if (const json::value* v = kube::jsonfields::field(o, "blocks");
      v != nullptr && v->is_array() && v->as_array().size() > kMaxBlkIOBlocks) {
    return kube::makeKubeError(fmt::format("{}: {} blocks, at most {}", blocks_path,
                                           v->as_array().size(), kMaxBlkIOBlocks));
  }
  auto list = kube::jsonfields::objectList(o, "blocks", path);
  if (!list)
    return list.error();
  std::vector<BlockConfig> out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto block = decodeBlock(*(*list)[i], indexPath(blocks_path, i));
    if (!block)
      return block.error();
    out.push_back(std::move(*block));
  }
  return out;
}

kube::Expected<BlkIOClass> decodeClass(const json::object& strategy, std::string_view cls) {
  BlkIOClass out;
  auto section = resourceQOSSection(strategy, cls, "blkioQOS");
  if (!section)
    return section.error();
  if (section->object == nullptr)
    return out;
  out.configured = true;
  auto enable = kube::jsonfields::boolField(*section->object, "enable", section->path);
  if (!enable)
    return enable.error();
  out.enable = *enable;
  auto blocks = decodeBlocks(*section->object, section->path);
  if (!blocks)
    return blocks.error();
  out.blocks = std::move(*blocks);
  return out;
}

}  // namespace

std::string_view blockTypeName(BlockType t) {
  switch (t) {
    case BlockType::kDevice:
      return "device";
    case BlockType::kPodVolume:
      return "podvolume";
    case BlockType::kVolumeGroup:
      return "volumegroup";
  }
  return "";
}

kube::Expected<BlkIOQOSStrategy> decodeBlkIOQOSStrategy(const json::object& resource_qos_strategy) {
  BlkIOQOSStrategy out;
  const std::pair<std::string_view, BlkIOClass*> classes[] = {{"lsrClass", &out.lsr},
                                                              {"lsClass", &out.ls},
                                                              {"beClass", &out.be},
                                                              {"cgroupRoot", &out.root}};
  for (auto [name, cls] : classes) {
    auto decoded = decodeClass(resource_qos_strategy, name);
    if (!decoded)
      return decoded.error();
    *cls = std::move(*decoded);
  }
  return out;
}

kube::Expected<std::vector<BlockConfig>> decodePodBlkIOQOS(std::string_view annotation) {
  if (annotation.empty())
    return std::vector<BlockConfig>();
  const std::string path(kAnnotationPodBlkIOQOS);
  boost::system::error_code ec;
  json::value v = json::parse(annotation, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("{}: not JSON: {}", path, ec.message()));
  if (!v.is_object())
    return kube::jsonfields::typeError(path, "object", v);
  return decodeBlocks(v.as_object(), path);
}

}  // namespace koord::roles::koordlet::qosmanager
