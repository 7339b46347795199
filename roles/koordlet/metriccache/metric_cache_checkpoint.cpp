#include "metriccache/metric_cache_checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <boost/crc.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "koord/core/log.h"
#include "koord/http/file_util.h"

namespace koord::roles::koordlet::metriccache {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 8> kMagic{'K', 'O', 'O', 'R', 'D', 'M', 'C', 'P'};
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8;
// Bounds on what a file may declare, checked before anything is allocated for it.
constexpr std::uint64_t kMaxKinds = 256;
constexpr std::uint64_t kMaxKindNameBytes = 64;
constexpr std::uint64_t kMaxSeries = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxKeyBytes = 512;
constexpr std::uint64_t kMaxSamplesPerSeries = std::uint64_t{1} << 24;
// Sample times are milliseconds since the epoch; a ring's offsets are 32-bit, so no step between
// two samples of a series is longer.
constexpr std::int64_t kMaxTimeMs = std::int64_t{1} << 47;
constexpr std::int64_t kMaxStepMs = std::int64_t{1} << 32;

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
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

std::uint32_t crc32(std::string_view bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

// Reads the payload; every method returns false once the input is exhausted or malformed, and
// `why` then says what was wrong.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  bool varint(std::uint64_t& v, std::string_view what) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty())
        return fail(fmt::format("truncated in {}", what));
      const auto byte = static_cast<std::uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      if (shift == 63 && byte > 1)
        return fail(fmt::format("{} overflows 64 bits", what));
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0)
        return true;
    }
    return fail(fmt::format("{} overflows 64 bits", what));
  }
  bool bounded(std::uint64_t& v, std::uint64_t max, std::string_view what) {
    if (!varint(v, what))
      return false;
    if (v > max)
      return fail(fmt::format("{} {} is over the bound {}", what, v, max));
    return true;
  }
  bool bytes(std::size_t n, std::string_view& out, std::string_view what) {
    if (rest_.size() < n)
      return fail(fmt::format("truncated in {}", what));
    out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  bool u32(std::uint32_t& v, std::string_view what) {
    std::string_view raw;
    if (!bytes(4, raw, what))
      return false;
    v = 0;
    for (std::size_t i = 0; i < 4; ++i)
      v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(raw[i])) << (8 * i);
    return true;
  }
  bool fail(std::string why) {
    if (why_.empty())
      why_ = std::move(why);
    return false;
  }

  std::size_t remaining() const { return rest_.size(); }
  const std::string& why() const { return why_; }

 private:
  std::string_view rest_;
  std::string why_;
};

std::uint64_t readFixed(std::string_view bytes, std::size_t offset, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i)
    v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes[offset + i])) << (8 * i);
  return v;
}

bool finiteBits(std::uint32_t bits) {
  return (bits & 0x7f800000u) != 0x7f800000u;
}

// One series' head as the payload holds it; its samples follow.
struct SeriesRecord {
  std::uint64_t kind_index = 0;
  std::string_view key;
  std::uint64_t count = 0;
};

bool readSeriesHead(Reader& in, std::size_t kind_count, SeriesRecord& record) {
  if (kind_count == 0)
    return in.fail("a series without a kind table");
  if (!in.bounded(record.kind_index, kind_count - 1, "kind index"))
    return false;
  std::uint64_t key_len = 0;
  if (!in.bounded(key_len, kMaxKeyBytes, "key length") ||
      !in.bytes(static_cast<std::size_t>(key_len), record.key, "key"))
    return false;
  if (!in.bounded(record.count, kMaxSamplesPerSeries, "sample count"))
    return false;
  // Every sample after the first takes at least two bytes: no count can outgrow the file.
  if (record.count > 0 && record.count - 1 > in.remaining() / 2)
    return in.fail(fmt::format("sample count {} is more than the file holds", record.count));
  return true;
}

// The series' samples, oldest first, each handed to on_point(time_ms, value) as it is decoded.
template <typename OnPoint>
bool readSamples(Reader& in, const SeriesRecord& record, OnPoint&& on_point) {
  if (record.count == 0)
    return true;
  std::uint64_t first = 0;
  std::uint32_t bits = 0;
  if (!in.varint(first, "first time") || !in.u32(bits, "first value"))
    return false;
  std::int64_t time = unzigzag(first);
  if (time < 0 || time > kMaxTimeMs)
    return in.fail(fmt::format("sample time {} ms is out of range", time));
  if (!finiteBits(bits))
    return in.fail("a value that is not finite");
  on_point(time, std::bit_cast<float>(bits));
  std::int64_t step = 0;
  for (std::uint64_t i = 1; i < record.count; ++i) {
    std::uint64_t dod = 0;
    std::uint64_t delta = 0;
    if (!in.varint(dod, "time delta") || !in.varint(delta, "value delta"))
      return false;
    const std::int64_t change = unzigzag(dod);
    if (change > kMaxStepMs || change < -kMaxStepMs)
      return in.fail("a time step out of range");
    step += change;
    if (step <= 0 || step > kMaxStepMs)
      return in.fail("sample times that do not increase");
    time += step;
    if (time > kMaxTimeMs)
      return in.fail(fmt::format("sample time {} ms is out of range", time));
    if (delta > std::numeric_limits<std::uint32_t>::max())
      return in.fail("a value delta over 32 bits");
    bits += static_cast<std::uint32_t>(unzigzag(delta));
    if (!finiteBits(bits))
      return in.fail("a value that is not finite");
    on_point(time, std::bit_cast<float>(bits));
  }
  return true;
}

struct Payload {
  std::vector<std::optional<MetricKind>> kinds;  // nullopt: a name this build does not know
  std::uint64_t series = 0;
};

bool readHead(Reader& in, Payload& out) {
  std::uint64_t kind_count = 0;
  if (!in.bounded(kind_count, kMaxKinds, "kind count"))
    return false;
  std::vector<std::string_view> names;
  for (std::uint64_t i = 0; i < kind_count; ++i) {
    std::uint64_t len = 0;
    std::string_view name;
    if (!in.bounded(len, kMaxKindNameBytes, "kind name length") ||
        !in.bytes(static_cast<std::size_t>(len), name, "kind name"))
      return false;
    if (std::find(names.begin(), names.end(), name) != names.end())
      return in.fail(fmt::format("kind {:?} listed twice", name));
    names.push_back(name);
    out.kinds.push_back(metricKindFromString(name));
  }
  return in.bounded(out.series, kMaxSeries, "series count");
}

// The payload of a file that passed the header checks, or why it did not.
Expected<std::string_view> checkHeader(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes)
    return invalidArgument(
        fmt::format("truncated: {} bytes, shorter than the header", bytes.size()));
  if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin()))
    return invalidArgument("not a metric cache checkpoint (bad magic)");
  const auto version = static_cast<std::uint32_t>(readFixed(bytes, 8, 4));
  if (version != kCheckpointVersion)
    return invalidArgument(
        fmt::format("version {}, this koordlet reads version {}", version, kCheckpointVersion));
  const auto crc = static_cast<std::uint32_t>(readFixed(bytes, 12, 4));
  const std::uint64_t length = readFixed(bytes, 16, 8);
  if (length != bytes.size() - kHeaderBytes)
    return invalidArgument(fmt::format("the header says {} payload bytes, the file holds {}",
                                       length, bytes.size() - kHeaderBytes));
  std::string_view payload = bytes.substr(kHeaderBytes);
  if (crc32(payload) != crc)
    return invalidArgument("CRC mismatch");
  return payload;
}

void encodeSeries(std::uint64_t kind_index, std::string_view key, const SampleRing& ring,
                  std::string& out) {
  putVarint(out, kind_index);
  putVarint(out, key.size());
  out.append(key);
  putVarint(out, ring.size());
  std::int64_t prev_time = ring.timeAt(0);
  auto prev_bits = std::bit_cast<std::uint32_t>(ring.valueAt(0));
  putVarint(out, zigzag(prev_time));
  putFixed(out, prev_bits);
  std::int64_t prev_step = 0;
  for (std::size_t i = 1; i < ring.size(); ++i) {
    const std::int64_t time = ring.timeAt(i);
    const auto bits = std::bit_cast<std::uint32_t>(ring.valueAt(i));
    const std::int64_t step = time - prev_time;
    putVarint(out, zigzag(step - prev_step));
    putVarint(out, zigzag(static_cast<std::int32_t>(bits - prev_bits)));
    prev_time = time;
    prev_step = step;
    prev_bits = bits;
  }
}

Error fileError(const fs::path& file, std::string_view what, int err) {
  return invalidArgument(
      fmt::format("{}: {}: {}", file.string(), what, std::generic_category().message(err)));
}

// The file's bytes; nullopt when there is none.
Expected<std::optional<std::string>> readCheckpoint(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT)
      return std::optional<std::string>();
    return fileError(file, "cannot open", errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return fileError(file, "cannot stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalidArgument(fmt::format("{}: not a regular file", file.string()));
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxCheckpointBytes) {
    ::close(fd);
    return invalidArgument(fmt::format("{}: {} bytes, larger than the {} bytes allowed",
                                       file.string(), st.st_size, kMaxCheckpointBytes));
  }
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return fileError(file, "read failed", err);
    }
    if (n == 0)
      break;  // shrank since fstat: the checks below refuse it as truncated
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return std::optional<std::string>(std::move(bytes));
}

}  // namespace

std::string encodeCheckpoint(const MetricCache& cache) {
  std::vector<MetricKind> kinds;
  std::string body;
  std::uint64_t series = 0;
  cache.forEachSeries([&](MetricKind kind, std::string_view key, const SampleRing& ring) {
    if (ring.empty())
      return;
    auto it = std::find(kinds.begin(), kinds.end(), kind);
    if (it == kinds.end())
      it = kinds.insert(kinds.end(), kind);
    encodeSeries(static_cast<std::uint64_t>(it - kinds.begin()), key, ring, body);
    ++series;
  });
  std::string payload;
  putVarint(payload, kinds.size());
  for (MetricKind kind : kinds) {
    const std::string_view name = toString(kind);
    putVarint(payload, name.size());
    payload.append(name);
  }
  putVarint(payload, series);
  payload.append(body);

  std::string out(kMagic.begin(), kMagic.end());
  out.reserve(kHeaderBytes + payload.size());
  putFixed(out, kCheckpointVersion);
  putFixed(out, crc32(payload));
  putFixed(out, static_cast<std::uint64_t>(payload.size()));
  out.append(payload);
  return out;
}

Expected<RestoreSummary> restoreCheckpoint(std::string_view bytes, MetricCache& cache,
                                           const RestoreOptions& options) {
  if (bytes.size() > kMaxCheckpointBytes)
    return invalidArgument(fmt::format("{} bytes, larger than the {} bytes allowed", bytes.size(),
                                       kMaxCheckpointBytes));
  auto payload = checkHeader(bytes);
  if (!payload)
    return payload.error();

  // First pass: every bound and the exact end, so a bad file changes nothing.
  {
    Reader in(*payload);
    Payload head;
    if (!readHead(in, head))
      return invalidArgument(fmt::format("corrupt: {}", in.why()));
    SeriesRecord record;
    for (std::uint64_t i = 0; i < head.series; ++i) {
      if (!readSeriesHead(in, head.kinds.size(), record) ||
          !readSamples(in, record, [](std::int64_t, float) {}))
        return invalidArgument(fmt::format("corrupt: series {}: {}", i, in.why()));
    }
    if (in.remaining() != 0)
      return invalidArgument(
          fmt::format("corrupt: {} bytes after the last series", in.remaining()));
  }

  RestoreSummary summary;
  Reader in(*payload);
  Payload head;
  readHead(in, head);
  const std::int64_t now_ms = floorToMs(options.now);
  std::vector<Sample> samples;
  SeriesRecord record;
  for (std::uint64_t i = 0; i < head.series; ++i) {
    readSeriesHead(in, head.kinds.size(), record);
    const std::optional<MetricKind> kind = head.kinds[record.kind_index];
    if (!kind) {
      readSamples(in, record, [](std::int64_t, float) {});
      ++summary.skipped_series;
      summary.dropped_samples += record.count;
      continue;
    }
    std::int64_t cutoff = now_ms - std::chrono::duration_cast<std::chrono::milliseconds>(
                                       cache.options().retentionFor(*kind))
                                       .count();
    if (options.max_age > std::chrono::nanoseconds::zero())
      cutoff = std::max(
          cutoff,
          now_ms - std::chrono::duration_cast<std::chrono::milliseconds>(options.max_age).count());
    // A ring keeps its newest capacity points: older ones would only be pushed out again, so
    // at most twice the capacity is held while decoding.
    const std::size_t capacity = cache.options().capacityFor(*kind);
    samples.clear();
    readSamples(in, record, [&](std::int64_t time_ms, float value) {
      if (time_ms < cutoff || time_ms > now_ms)
        return;
      if (samples.size() >= 2 * capacity)
        samples.erase(samples.begin(), samples.end() - static_cast<std::ptrdiff_t>(capacity));
      samples.push_back({*kind, record.key, fromMs(time_ms), value});
    });
    if (samples.size() > capacity)
      samples.erase(samples.begin(), samples.end() - static_cast<std::ptrdiff_t>(capacity));
    summary.dropped_samples += static_cast<std::size_t>(record.count) - samples.size();
    if (samples.empty())
      continue;
    const AppendSummary appended = cache.appendAll(samples);
    summary.samples += appended.appended;
    summary.dropped_samples += appended.rejected;
    if (appended.appended > 0)
      ++summary.series;
    else
      ++summary.skipped_series;
  }
  return summary;
}

Expected<std::size_t> writeCheckpointFile(const MetricCache& cache, const fs::path& dir) {
  const fs::path file = dir / kCheckpointFileName;
  std::string bytes = encodeCheckpoint(cache);
  if (bytes.size() > kMaxCheckpointBytes)
    return invalidArgument(fmt::format("{}: {} bytes, over the {} bytes a checkpoint may take",
                                       file.string(), bytes.size(), kMaxCheckpointBytes));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return invalidArgument(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  if (auto written = http::writeFileAtomic(file.string(), bytes, 0600); !written)
    return invalidArgument(fmt::format("{}: {}", file.string(), written.error().message()));
  return bytes.size();
}

RestoreSummary restoreCheckpointFile(MetricCache& cache, const fs::path& dir,
                                     const RestoreOptions& options) {
  const fs::path file = dir / kCheckpointFileName;
  auto bytes = readCheckpoint(file);
  if (!bytes) {
    KOORD_LOG_WARNING("metric cache: checkpoint refused, starting empty: {}",
                      bytes.error().message);
    return {};
  }
  if (!*bytes) {
    KOORD_LOG_INFO("metric cache: no checkpoint at {}, starting empty", file.string());
    return {};
  }
  auto restored = restoreCheckpoint(**bytes, cache, options);
  if (!restored) {
    KOORD_LOG_WARNING("metric cache: checkpoint {} refused, starting empty: {}", file.string(),
                      restored.error().message);
    return {};
  }
  KOORD_LOG_INFO(
      "metric cache: restored {} series ({} samples) from {}; {} samples past the retention or "
      "refused, {} series skipped",
      restored->series, restored->samples, file.string(), restored->dropped_samples,
      restored->skipped_series);
  return *restored;
}

struct CheckpointWriter::State {
  const MetricCache& cache;
  const fs::path dir;
  const std::chrono::milliseconds interval;
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  bool stopped = false;
  std::thread thread;
  // Serializes writes (the thread's and stop()'s) and keeps the failure streak.
  std::mutex write_mu;
  bool failing = false;

  State(const MetricCache& c, fs::path d, std::chrono::milliseconds i)
      : cache(c), dir(std::move(d)), interval(i) {}

  void write() {
    std::lock_guard lock(write_mu);
    auto written = writeCheckpointFile(cache, dir);
    if (!written) {
      if (!failing)
        KOORD_LOG_ERROR("metric cache: checkpoint not written: {}", written.error().message);
      failing = true;
      return;
    }
    if (failing)
      KOORD_LOG_INFO("metric cache: checkpoint written again ({} bytes)", *written);
    failing = false;
  }

  void loop() {
    std::unique_lock lock(mu);
    while (!stopping) {
      if (wake.wait_for(lock, interval, [this] { return stopping; }))
        break;
      lock.unlock();
      write();
      lock.lock();
    }
  }

  void join() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    wake.notify_all();
    if (thread.joinable())
      thread.join();
  }
};

CheckpointWriter::CheckpointWriter(const MetricCache& cache, fs::path dir,
                                   std::chrono::milliseconds interval)
    : state_(std::make_shared<State>(cache, std::move(dir), interval)) {}

CheckpointWriter::~CheckpointWriter() {
  state_->join();
}

void CheckpointWriter::start() {
  if (state_->thread.joinable() || state_->interval <= std::chrono::milliseconds::zero())
    return;
  state_->thread = std::thread([state = state_] { state->loop(); });
}

void CheckpointWriter::stop() {
  state_->join();
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopped)
      return;
    state_->stopped = true;
  }
  state_->write();
}

void CheckpointWriter::writeNow() {
  state_->write();
}

}  // namespace koord::roles::koordlet::metriccache
