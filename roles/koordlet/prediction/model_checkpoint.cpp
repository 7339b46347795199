#include "prediction/model_checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <system_error>

#include <fmt/format.h>

#include "koord/http/file_util.h"

namespace koord::roles::koordlet::prediction {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxKeyLength = 253;

std::int64_t toMs(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

TimePoint fromMs(std::int64_t ms) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::milliseconds(ms)));
}

json::object encodeHistogram(const HistogramCheckpoint& h, int layout) {
  json::array weights;
  weights.reserve(h.buckets.size());
  for (auto [bucket, weight] : h.buckets)
    weights.push_back(json::array{bucket, weight});
  // As text from to_chars: Boost.JSON's number parsing may be an ulp off, to_chars and
  // from_chars round-trip exactly.
  char total[64];
  auto written = std::to_chars(total, total + sizeof total, h.total_weight);
  json::object o{{"layout", layout},
                 {"totalWeight", std::string_view(total, written.ptr - total)},
                 {"weights", weights}};
  if (h.reference_time)
    o["referenceTime"] = toMs(*h.reference_time);
  return o;
}

// Times within +/-10^13 ms of the epoch (about 300 years): a chrono time point holds them.
Expected<std::int64_t> timeMs(const json::object& o, std::string_view name, std::string_view path) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr)
    return invalidArgument(fmt::format("{}.{}: missing", path, name));
  constexpr std::int64_t kBound = 10'000'000'000'000;
  if (!v->is_int64() || v->get_int64() < -kBound || v->get_int64() > kBound)
    return invalidArgument(fmt::format("{}.{}: not a time in Unix milliseconds", path, name));
  return v->get_int64();
}

Expected<std::uint32_t> u32(const json::value& v, std::string_view path) {
  if (v.is_int64() && v.get_int64() >= 0 &&
      v.get_int64() <= std::numeric_limits<std::uint32_t>::max())
    return static_cast<std::uint32_t>(v.get_int64());
  if (v.is_uint64() && v.get_uint64() <= std::numeric_limits<std::uint32_t>::max())
    return static_cast<std::uint32_t>(v.get_uint64());
  return invalidArgument(fmt::format("{}: not an unsigned 32-bit integer", path));
}

Expected<HistogramCheckpoint> decodeHistogram(const json::object& root, std::string_view name,
                                              const ExponentialBuckets& layout) {
  const json::value* v = root.if_contains(name);
  if (v == nullptr || !v->is_object())
    return invalidArgument(fmt::format("{}: missing or not an object", name));
  const json::object& o = v->get_object();
  const json::value* l = o.if_contains("layout");
  if (l == nullptr || !l->is_int64() || l->get_int64() != layout.numBuckets())
    return invalidArgument(
        fmt::format("{}.layout: not this build's {} buckets", name, layout.numBuckets()));
  HistogramCheckpoint h;
  if (o.contains("referenceTime")) {
    auto ms = timeMs(o, "referenceTime", name);
    if (!ms)
      return ms.error();
    h.reference_time = fromMs(*ms);
  }
  const json::value* total = o.if_contains("totalWeight");
  if (total == nullptr || !total->is_string())
    return invalidArgument(fmt::format("{}.totalWeight: missing or not a string", name));
  std::string_view text = total->get_string();
  auto parsed = std::from_chars(text.data(), text.data() + text.size(), h.total_weight);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size())
    return invalidArgument(fmt::format("{}.totalWeight: {:?} is not a number", name, text));
  const json::value* weights = o.if_contains("weights");
  if (weights == nullptr || !weights->is_array())
    return invalidArgument(fmt::format("{}.weights: missing or not an array", name));
  const json::array& arr = weights->get_array();
  if (arr.size() > static_cast<std::size_t>(layout.numBuckets()))
    return invalidArgument(fmt::format("{}.weights: {} entries, more than the {} buckets", name,
                                       arr.size(), layout.numBuckets()));
  h.buckets.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    std::string path = fmt::format("{}.weights[{}]", name, i);
    if (!arr[i].is_array() || arr[i].get_array().size() != 2)
      return invalidArgument(fmt::format("{}: not a [bucket, weight] pair", path));
    auto bucket = u32(arr[i].get_array()[0], path);
    if (!bucket)
      return bucket.error();
    auto weight = u32(arr[i].get_array()[1], path);
    if (!weight)
      return weight.error();
    h.buckets.emplace_back(*bucket, *weight);
  }
  // The histogram's own checks, on a scratch histogram (the half-life does not matter here).
  DecayingHistogram scratch(layout, std::chrono::hours(1));
  if (auto loaded = scratch.load(h); !loaded)
    return invalidArgument(fmt::format("{}: {}", name, loaded.error().message));
  return h;
}

// The whole file if it is at most `limit` bytes; nullopt-like error otherwise. Checked with
// fstat first and then by reading at most limit + 1 bytes, so a file growing meanwhile is
// still caught.
Expected<std::string> readBounded(const fs::path& file, std::size_t limit) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return invalidArgument(fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalidArgument("not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > limit) {
    ::close(fd);
    return invalidArgument(fmt::format("{} bytes, over the {} a checkpoint may take",
                                       static_cast<std::uint64_t>(st.st_size), limit));
  }
  std::string out(limit + 1, '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return invalidArgument(fmt::format("cannot read: {}", std::strerror(err)));
    }
    if (n == 0)
      break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got > limit)
    return invalidArgument(fmt::format("over the {} bytes a checkpoint may take", limit));
  out.resize(got);
  return out;
}

bool isTemporary(std::string_view name) {
  // http::writeFileAtomic's ".<name>.tmp.XXXXXX".
  return name.starts_with('.') && name.find(".tmp.") != std::string_view::npos;
}

}  // namespace

bool validModelKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyLength || key.front() == '.')
    return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string encodeModelCheckpoint(const ModelCheckpoint& c) {
  json::object o{{"version", kModelCheckpointVersion},
                 {"key", c.key},
                 {"lastUpdated", toMs(c.last_updated)},
                 {"cpu", encodeHistogram(c.cpu, cpuBuckets().numBuckets())},
                 {"memory", encodeHistogram(c.memory, memoryBuckets().numBuckets())}};
  return json::serialize(o);
}

Expected<ModelCheckpoint> decodeModelCheckpoint(std::string_view bytes) {
  if (bytes.size() > kMaxModelCheckpointBytes)
    return invalidArgument(fmt::format("{} bytes, over the {} a checkpoint may take", bytes.size(),
                                       kMaxModelCheckpointBytes));
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = 8;
  json::value v = json::parse(bytes, ec, {}, options);
  if (ec)
    return invalidArgument(fmt::format("not JSON: {}", ec.message()));
  if (!v.is_object())
    return invalidArgument("not a JSON object");
  const json::object& o = v.get_object();
  const json::value* version = o.if_contains("version");
  if (version == nullptr || !version->is_int64())
    return invalidArgument("version: missing or not an integer");
  if (version->get_int64() != kModelCheckpointVersion)
    return invalidArgument(
        fmt::format("version {} is not {}", version->get_int64(), kModelCheckpointVersion));
  ModelCheckpoint c;
  const json::value* key = o.if_contains("key");
  if (key == nullptr || !key->is_string() || !validModelKey(key->get_string()))
    return invalidArgument("key: missing or not a valid model key");
  c.key = std::string(key->get_string());
  auto updated = timeMs(o, "lastUpdated", "");
  if (!updated)
    return updated.error();
  c.last_updated = fromMs(*updated);
  auto cpu = decodeHistogram(o, "cpu", cpuBuckets());
  if (!cpu)
    return cpu.error();
  c.cpu = std::move(*cpu);
  auto memory = decodeHistogram(o, "memory", memoryBuckets());
  if (!memory)
    return memory.error();
  c.memory = std::move(*memory);
  return c;
}

ModelCheckpointStore::ModelCheckpointStore(fs::path dir) : dir_(std::move(dir)) {}

fs::path ModelCheckpointStore::fileOf(std::string_view key) const {
  std::string name(key);
  name += kModelCheckpointSuffix;
  return dir_ / name;
}

Expected<void> ModelCheckpointStore::save(const ModelCheckpoint& c) const {
  if (!validModelKey(c.key))
    return invalidArgument(fmt::format("model key {:?} cannot name a file", c.key));
  std::string bytes = encodeModelCheckpoint(c);
  const fs::path file = fileOf(c.key);
  if (bytes.size() > kMaxModelCheckpointBytes)
    return invalidArgument(fmt::format("{}: {} bytes, over the {} a checkpoint may take",
                                       file.string(), bytes.size(), kMaxModelCheckpointBytes));
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    return invalidArgument(fmt::format("{}: cannot create: {}", dir_.string(), ec.message()));
  if (auto written = http::writeFileAtomic(file.string(), bytes, 0600); !written)
    return invalidArgument(fmt::format("{}: {}", file.string(), written.error().message()));
  return {};
}

Expected<void> ModelCheckpointStore::remove(std::string_view key) const {
  if (!validModelKey(key))
    return invalidArgument(fmt::format("model key {:?} cannot name a file", key));
  std::error_code ec;
  fs::remove(fileOf(key), ec);
  if (ec)
    return invalidArgument(
        fmt::format("{}: cannot remove: {}", fileOf(key).string(), ec.message()));
  return {};
}

LoadedCheckpoints ModelCheckpointStore::loadAll() const {
  LoadedCheckpoints out;
  std::error_code ec;
  const bool exists = fs::exists(dir_, ec);
  if (ec) {
    out.error = fmt::format("{}: {}", dir_.string(), ec.message());
    return out;
  }
  if (!exists) {
    out.missing = true;
    return out;
  }
  std::vector<std::string> names;
  fs::directory_iterator it(dir_, ec);
  if (ec) {
    out.error = fmt::format("{}: cannot list: {}", dir_.string(), ec.message());
    return out;
  }
  // Names only, bounded: a directory flooded with files must not cost unbounded memory.
  constexpr std::size_t kMaxNames = 4 * kMaxModelCheckpointFiles;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      out.error = fmt::format("{}: cannot list: {}", dir_.string(), ec.message());
      break;
    }
    std::string name = it->path().filename().string();
    if (isTemporary(name)) {
      std::error_code rm;
      if (fs::remove(it->path(), rm))
        ++out.temporaries_removed;
      continue;
    }
    if (!name.ends_with(kModelCheckpointSuffix))
      continue;
    if (names.size() >= kMaxNames) {
      ++out.skipped;
      continue;
    }
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  if (names.size() > kMaxModelCheckpointFiles) {
    out.skipped += names.size() - kMaxModelCheckpointFiles;
    names.resize(kMaxModelCheckpointFiles);
  }
  for (const auto& name : names) {
    std::string_view key(name);
    key.remove_suffix(kModelCheckpointSuffix.size());
    auto refuse = [&](std::string why) {
      out.refused.emplace_back(name, std::move(why));
      if (validModelKey(key))
        out.refused_keys.emplace_back(key);
    };
    if (!validModelKey(key)) {
      refuse("the name is not a model key");
      continue;
    }
    auto bytes = readBounded(dir_ / name, kMaxModelCheckpointBytes);
    if (!bytes) {
      refuse(bytes.error().message);
      continue;
    }
    auto decoded = decodeModelCheckpoint(*bytes);
    if (!decoded) {
      refuse(decoded.error().message);
      continue;
    }
    if (decoded->key != key) {
      refuse(fmt::format("holds the model {:?}, not {:?}", decoded->key, key));
      continue;
    }
    out.checkpoints.push_back(std::move(*decoded));
  }
  return out;
}

}  // namespace koord::roles::koordlet::prediction
