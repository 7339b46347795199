// The metric cache's checkpoint: what is written comes back sample for sample; a file that is
// truncated, corrupt, too large or of another version is refused whole and leaves the cache
// empty; restore keeps only what the retention and the cache's own bounds allow.
#include "metriccache/metric_cache_checkpoint.h"

#include <boost/crc.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "log_lines.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet::metriccache;
using namespace std::chrono_literals;
using koord::testing::LogLines;
using koord::testing::TempTree;

namespace {

using Points = std::vector<std::pair<std::int64_t, float>>;
using Dump = std::map<std::pair<std::string, std::string>, Points>;

Dump dump(const MetricCache& cache) {
  Dump out;
  cache.forEachSeries([&](MetricKind kind, std::string_view key, const SampleRing& ring) {
    Points& points = out[{std::string(toString(kind)), std::string(key)}];
    for (std::size_t i = 0; i < ring.size(); ++i)
      points.emplace_back(ring.timeAt(i), ring.valueAt(i));
  });
  return out;
}

const TimePoint kStart = fromMs(1'700'000'000'000);

MetricCacheOptions longRetention() {
  MetricCacheOptions options;
  options.retention = 3h;
  options.series_expire = 3h;
  return options;
}

// Node series and pods with containers: `seconds` samples each, one a second with a little
// jitter, values that move as CPU (noisy) and memory (steady, in pages) do.
void fill(MetricCache& cache, int pods, int seconds, TimePoint start = kStart) {
  std::vector<Sample> samples;
  std::vector<std::string> keys;
  for (int p = 0; p < pods; ++p) {
    keys.push_back("pod-uid-" + std::to_string(p) + "-0000-1111-2222-333333333333");
    for (int c = 0; c < 2; ++c)
      keys.push_back("containerd://" + std::string(56, static_cast<char>('a' + p % 26)) +
                     std::to_string(p * 10 + c));
  }
  for (int s = 0; s < seconds; ++s) {
    const TimePoint t = start + std::chrono::seconds(s) + std::chrono::milliseconds((s * 7) % 5);
    samples.clear();
    const double wave = std::sin(s * 0.37) * 0.5 + 1.0;
    samples.push_back({MetricKind::kNodeCPUUsage, "", t, 12.0 * wave + (s % 13) * 0.01});
    samples.push_back({MetricKind::kNodeMemoryUsage, "", t, 64e9 + (s / 10) * 4096.0});
    samples.push_back({MetricKind::kSystemCPUUsage, "", t, 0.8 * wave});
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const bool pod = k % 3 == 0;
      const double cpu = 0.25 * wave + static_cast<double>((s * 31 + k * 17) % 97) / 1000.0;
      const double mem = 200e6 + static_cast<double>(k) * 1e6 + (s / 30) * 4096.0;
      samples.push_back(
          {pod ? MetricKind::kPodCPUUsage : MetricKind::kContainerCPUUsage, keys[k], t, cpu});
      samples.push_back(
          {pod ? MetricKind::kPodMemoryUsage : MetricKind::kContainerMemoryUsage, keys[k], t, mem});
    }
    cache.appendAll(samples);
  }
}

void putVarint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <typename T>
void putFixed(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
}

// A file around `payload` with a correct header, so that only the payload's own checks apply.
std::string withHeader(const std::string& payload, std::uint32_t version = kCheckpointVersion) {
  boost::crc_32_type crc;
  crc.process_bytes(payload.data(), payload.size());
  std::string out = "KOORDMCP";
  putFixed(out, version);
  putFixed(out, crc.checksum());
  putFixed(out, static_cast<std::uint64_t>(payload.size()));
  return out + payload;
}

std::string payloadOf(const std::string& file) {
  return file.substr(24);
}

// One series of `kind` with samples at the given times (ms), value 1.0.
std::string oneSeries(std::string_view kind, std::string_view key,
                      const std::vector<std::int64_t>& times) {
  std::string p;
  putVarint(p, 1);
  putVarint(p, kind.size());
  p.append(kind);
  putVarint(p, 1);
  putVarint(p, 0);
  putVarint(p, key.size());
  p.append(key);
  putVarint(p, times.size());
  if (times.empty())
    return p;
  putVarint(
      p, (static_cast<std::uint64_t>(times[0]) << 1) ^ static_cast<std::uint64_t>(times[0] >> 63));
  putFixed(p, std::uint32_t{0x3f800000});
  std::int64_t prev_step = 0;
  for (std::size_t i = 1; i < times.size(); ++i) {
    const std::int64_t step = times[i] - times[i - 1];
    const std::int64_t dod = step - prev_step;
    putVarint(p, (static_cast<std::uint64_t>(dod) << 1) ^ static_cast<std::uint64_t>(dod >> 63));
    putVarint(p, 0);
    prev_step = step;
  }
  return p;
}

// The head of one series that declares `count` samples and holds none of them.
std::string oneSeriesHead(std::string_view kind, std::uint64_t count) {
  std::string p;
  putVarint(p, 1);
  putVarint(p, kind.size());
  p.append(kind);
  putVarint(p, 1);
  putVarint(p, 0);
  putVarint(p, 0);
  putVarint(p, count);
  return p;
}

}  // namespace

TEST_CASE("metric cache checkpoint: a round trip keeps every series sample for sample",
          "[koordlet][checkpoint]") {
  MetricCache cache(longRetention());
  fill(cache, 5, 300);
  // A series with one sample, an empty key, and values that are not round.
  REQUIRE(cache.append(MetricKind::kHostAppCPUUsage, "nginx", kStart, 0.123456789));
  REQUIRE(cache.append(MetricKind::kBECPULimit, "", kStart + 5s, -0.0));
  const std::string bytes = encodeCheckpoint(cache);

  MetricCache restored(longRetention());
  auto summary = restoreCheckpoint(bytes, restored, {.now = kStart + 301s, .max_age = 12h});
  REQUIRE(summary.has_value());
  CHECK(summary->series == cache.seriesCount());
  CHECK(summary->dropped_samples == 0);
  CHECK(summary->skipped_series == 0);
  CHECK(summary->samples == cache.stats().points);
  CHECK(dump(restored) == dump(cache));
  // Series may come out in another order, but not another size.
  CHECK(encodeCheckpoint(restored).size() == bytes.size());
}

TEST_CASE("metric cache checkpoint: an empty cache writes a file that restores to nothing",
          "[koordlet][checkpoint]") {
  MetricCache cache;
  MetricCache restored;
  auto summary = restoreCheckpoint(encodeCheckpoint(cache), restored, {.now = kStart});
  REQUIRE(summary.has_value());
  CHECK(summary->series == 0);
  CHECK(restored.seriesCount() == 0);
}

TEST_CASE("metric cache checkpoint: a damaged file is refused whole and the cache stays empty",
          "[koordlet][checkpoint]") {
  MetricCache cache(longRetention());
  fill(cache, 3, 120);
  const std::string good = encodeCheckpoint(cache);
  const std::string payload = payloadOf(good);
  const std::int64_t t0 = floorToMs(kStart);

  struct Case {
    std::string name;
    std::string bytes;
    std::string why;
  };
  std::string flipped = good;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  std::string long_length = good;
  long_length[16] = static_cast<char>(long_length[16] + 1);
  const std::vector<Case> cases = {
      {"empty", "", "truncated"},
      {"header cut", good.substr(0, 23), "truncated"},
      {"payload cut", good.substr(0, good.size() - 1), "payload bytes"},
      {"trailing byte", good + "x", "payload bytes"},
      {"length field", long_length, "payload bytes"},
      {"flipped bit", flipped, "CRC"},
      {"bad magic", bad_magic, "magic"},
      {"other version", withHeader(payload, 2), "version 2"},
      {"oversized", std::string(kMaxCheckpointBytes + 1, '\0'), "larger than"},
      // CRC-valid payloads that break the format's own bounds.
      {"series past the payload", withHeader(payload + "\x01"), "after the last series"},
      {"kind index out of range", withHeader(std::string("\x01\x01x\x01\x05\x00\x00", 7)),
       "kind index"},
      {"series without kinds", withHeader(std::string("\x00\x01\x00\x00\x00", 5)),
       "without a kind table"},
      {"huge series count", withHeader(std::string("\x00\xff\xff\xff\x7f", 5)), "series count"},
      {"huge sample count", withHeader(oneSeriesHead("node_cpu_usage", 1u << 25)), "sample count"},
      {"more samples than bytes", withHeader(oneSeriesHead("node_cpu_usage", 1000)),
       "more than the file holds"},
      {"times going back", withHeader(oneSeries("node_cpu_usage", "", {t0, t0 - 1})),
       "do not increase"},
      {"repeated time", withHeader(oneSeries("node_cpu_usage", "", {t0, t0 + 5, t0 + 5})),
       "do not increase"},
      {"time out of range", withHeader(oneSeries("node_cpu_usage", "", {-5})), "out of range"},
      {"kind listed twice", withHeader(std::string("\x02\x01x\x01x\x00", 6)), "listed twice"},
      {"overlong varint", withHeader(std::string(11, '\xff')), "overflows"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    MetricCache target(longRetention());
    auto restored = restoreCheckpoint(c.bytes, target, {.now = kStart + 200s});
    REQUIRE_FALSE(restored.has_value());
    CHECK_THAT(restored.error().message, Catch::Contains(c.why));
    CHECK(target.seriesCount() == 0);
  }
  MetricCache target(longRetention());
  CHECK(restoreCheckpoint(good, target, {.now = kStart + 200s}).has_value());
}

TEST_CASE("metric cache checkpoint: restore keeps the retention and the cache's bounds",
          "[koordlet][checkpoint]") {
  MetricCache cache(longRetention());
  fill(cache, 2, 2 * 3600);  // two hours
  const std::string bytes = encodeCheckpoint(cache);
  const TimePoint now = kStart + 2h + 10s;

  SECTION("-tsdb-retention-duration drops older samples") {
    MetricCache restored(longRetention());
    auto summary = restoreCheckpoint(bytes, restored, {.now = now, .max_age = 1h});
    REQUIRE(summary.has_value());
    CHECK(summary->dropped_samples > 0);
    for (const auto& [series, points] : dump(restored)) {
      INFO(series.first << " " << series.second);
      REQUIRE_FALSE(points.empty());
      CHECK(points.front().first >= floorToMs(now - 1h));
    }
  }
  SECTION("the cache's own retention and ring capacity apply too") {
    MetricCacheOptions options;  // 30 minutes; pods 10 minutes
    options.retention_by_kind.emplace_back(MetricKind::kPodCPUUsage, 600s);
    MetricCache restored(options);
    auto summary = restoreCheckpoint(bytes, restored, {.now = now, .max_age = 12h});
    REQUIRE(summary.has_value());
    for (const auto& [series, points] : dump(restored)) {
      INFO(series.first);
      const auto kept = series.first == "pod_cpu_usage" ? 600s : 1800s;
      CHECK(points.front().first >= floorToMs(now - kept));
      CHECK(points.size() <= options.capacityFor(*metricKindFromString(series.first)));
    }
  }
  SECTION("samples newer than now are not restored") {
    MetricCache restored(longRetention());
    auto summary = restoreCheckpoint(bytes, restored, {.now = kStart + 1h, .max_age = 12h});
    REQUIRE(summary.has_value());
    for (const auto& [series, points] : dump(restored))
      CHECK(points.back().first <= floorToMs(kStart + 1h));
  }
  SECTION("the series cap refuses the series past it") {
    MetricCacheOptions options = longRetention();
    options.max_series = 4;
    MetricCache restored(options);
    auto summary = restoreCheckpoint(bytes, restored, {.now = now, .max_age = 12h});
    REQUIRE(summary.has_value());
    // 2 pods and 4 containers, two kinds each: 12 keyed series, 4 kept; node series never count.
    CHECK(summary->skipped_series == 8);
    CHECK(restored.seriesCount() == 4 + 3);
  }
  SECTION("nothing is restored when it all is too old") {
    MetricCache restored(longRetention());
    auto summary = restoreCheckpoint(bytes, restored, {.now = now + 24h, .max_age = 12h});
    REQUIRE(summary.has_value());
    CHECK(summary->samples == 0);
    CHECK(restored.seriesCount() == 0);
  }
}

TEST_CASE("metric cache checkpoint: a kind this build does not know is skipped",
          "[koordlet][checkpoint]") {
  const std::int64_t t0 = floorToMs(kStart);
  std::string payload;
  putVarint(payload, 2);
  for (std::string_view name : {"node_cpu_usage", "node_gpu_magic"}) {
    putVarint(payload, name.size());
    payload.append(name);
  }
  putVarint(payload, 2);
  for (std::uint64_t kind : {0, 1}) {
    putVarint(payload, kind);
    putVarint(payload, 0);
    putVarint(payload, 1);
    putVarint(payload, static_cast<std::uint64_t>(t0) << 1);
    putFixed(payload, std::uint32_t{0x40000000});  // 2.0
  }
  MetricCache restored;
  auto summary = restoreCheckpoint(withHeader(payload), restored, {.now = kStart + 1s});
  REQUIRE(summary.has_value());
  CHECK(summary->series == 1);
  CHECK(summary->skipped_series == 1);
  auto last = restored.last(MetricKind::kNodeCPUUsage, "");
  REQUIRE(last);
  CHECK(last->value == 2.0);
}

TEST_CASE("metric cache checkpoint: the file is written atomically and read back once",
          "[koordlet][checkpoint]") {
  TempTree tree("koord-ckpt");
  const auto dir = tree.path("metric-data");  // made by the writer
  MetricCache cache(longRetention());
  fill(cache, 4, 100);
  auto written = writeCheckpointFile(cache, dir);
  REQUIRE(written.has_value());
  CHECK(*written == std::filesystem::file_size(dir / kCheckpointFileName));
  // Only the checkpoint: the temporary file was renamed over it.
  CHECK(std::distance(std::filesystem::directory_iterator(dir),
                      std::filesystem::directory_iterator()) == 1);

  {
    LogLines log;
    MetricCache restored(longRetention());
    auto summary = restoreCheckpointFile(restored, dir, {.now = kStart + 100s});
    CHECK(summary.series == cache.seriesCount());
    CHECK(dump(restored) == dump(cache));
    CHECK(log.count("restored") == 1);
    CHECK(log.problems() == 0);
  }
  {
    // Damaged on disk: one warning naming the file, nothing restored.
    tree.write("metric-data/metric-cache.ckpt", "KOORDMCP but not really");
    LogLines log;
    MetricCache restored(longRetention());
    auto summary = restoreCheckpointFile(restored, dir, {.now = kStart + 100s});
    CHECK(summary.series == 0);
    CHECK(restored.seriesCount() == 0);
    CHECK(log.problems() == 1);
    CHECK(log.count("metric-cache.ckpt refused, starting empty") == 1);
  }
  {
    LogLines log;
    MetricCache restored;
    restoreCheckpointFile(restored, tree.path("nowhere"), {.now = kStart});
    CHECK(log.count("no checkpoint") == 1);
    CHECK(log.problems() == 0);
  }
}

TEST_CASE("metric cache checkpoint: the writer writes every interval and once more at stop",
          "[koordlet][checkpoint]") {
  TempTree tree("koord-ckpt");
  const auto file = tree.path("db") / kCheckpointFileName;
  MetricCache cache(longRetention());
  fill(cache, 1, 10);
  CheckpointWriter writer(cache, tree.path("db"), 20ms);
  writer.start();
  for (int i = 0; i < 500 && !std::filesystem::exists(file); ++i)
    std::this_thread::sleep_for(10ms);
  REQUIRE(std::filesystem::exists(file));

  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", kStart + 1h, 42.0));
  writer.stop();
  MetricCache restored(longRetention());
  restoreCheckpointFile(restored, tree.path("db"), {.now = kStart + 1h});
  auto last = restored.last(MetricKind::kNodeCPUUsage, "");
  REQUIRE(last);
  CHECK(last->value == 42.0);
}

TEST_CASE("metric cache checkpoint: a node with 100 pods checkpoints in little space",
          "[koordlet][checkpoint]") {
  // As the koordlet sizes its cache: node series 30 minutes, pods and containers 10 minutes.
  MetricCacheOptions options;
  for (auto kind : {MetricKind::kPodCPUUsage, MetricKind::kPodMemoryUsage,
                    MetricKind::kContainerCPUUsage, MetricKind::kContainerMemoryUsage})
    options.retention_by_kind.emplace_back(kind, 600s);
  MetricCache cache(options);
  fill(cache, 100, 1800);
  const std::string bytes = encodeCheckpoint(cache);
  // 600 keyed series of 600 samples and 3 node series of 1800: 8 bytes a point in memory.
  const std::size_t points = cache.stats().points;
  CAPTURE(bytes.size(), points);
  CHECK(points == 600 * 600 + 3 * 1800);
  CHECK(bytes.size() < points * 4);
}
