// The metric cache's checkpoint: its series in one compact file under -tsdb-path, written
// atomically every interval and at shutdown, and restored at startup so a restart keeps its
// windows.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "koord/core/expected.h"
#include "metriccache/metric_cache.h"

namespace koord::roles::koordlet::metriccache {

/// The file's name in -tsdb-path (Koordinator keeps its TSDB's blocks and WAL there).
inline constexpr std::string_view kCheckpointFileName = "metric-cache.ckpt";
/// Larger files are refused on read and never written: a full cache of pods and containers at
/// the defaults takes a few MiB.
inline constexpr std::size_t kMaxCheckpointBytes = std::size_t{64} << 20;
inline constexpr std::uint32_t kCheckpointVersion = 1;

/// The file's bytes. Format (little-endian): 8-byte magic "KOORDMCP", u32 version, u32 CRC-32 of
/// the payload, u64 payload length, then the payload: the kind names used (by name, so that a
/// build with other kinds still reads the file), the series count, and per series its kind's
/// index, its key and its samples: the first time and value whole, then per sample the time's
/// delta-of-delta and the float bits' delta, as zigzag varints.
std::string encodeCheckpoint(const MetricCache& cache);

struct RestoreOptions {
  TimePoint now;
  /// -tsdb-retention-duration: samples older than now - max_age are dropped. Zero or less: only
  /// the cache's own retention applies (it always does).
  std::chrono::nanoseconds max_age{0};
};

struct RestoreSummary {
  std::size_t series = 0;           // series that got at least one sample
  std::size_t samples = 0;          // samples appended
  std::size_t dropped_samples = 0;  // past the retention, after now, or refused by the cache
  std::size_t skipped_series = 0;   // a kind this build does not know, or past the series cap
};

/// Checks all of `bytes` first (header, CRC, every bound), then appends the samples within the
/// retention to `cache`. A file that fails a check is refused with an error saying why, and the
/// cache is left as it was.
Expected<RestoreSummary> restoreCheckpoint(std::string_view bytes, MetricCache& cache,
                                           const RestoreOptions& options);

/// Encodes `cache` and writes `dir`/kCheckpointFileName through a temporary file, fsync and
/// rename, creating `dir` if needed. Returns the bytes written; errors name the file.
Expected<std::size_t> writeCheckpointFile(const MetricCache& cache,
                                          const std::filesystem::path& dir);

/// Restores `dir`/kCheckpointFileName into `cache` and logs one line: what was restored, that
/// there was no checkpoint, or that the file was refused and why (the cache then starts empty).
RestoreSummary restoreCheckpointFile(MetricCache& cache, const std::filesystem::path& dir,
                                     const RestoreOptions& options);

/// Writes the checkpoint every `interval` on a thread of its own, so that fsync never holds up
/// the koordlet's loops, and once more at stop(). A failed write is logged once until a write
/// succeeds again.
class CheckpointWriter {
 public:
  CheckpointWriter(const MetricCache& cache, std::filesystem::path dir,
                   std::chrono::milliseconds interval);
  /// Ends the thread without the final write (stop() does that).
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  void start();
  /// Ends the thread, then writes the last checkpoint on the caller's thread. Idempotent.
  void stop();
  /// Writes one checkpoint now, on the caller's thread.
  void writeNow();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace koord::roles::koordlet::metriccache
