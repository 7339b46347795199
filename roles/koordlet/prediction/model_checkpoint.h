// The peak predictor's checkpoints: one small JSON file per model in
// -prediction-checkpoint-filepath, written atomically and read back with bounds at startup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/core/expected.h"
#include "prediction/histogram.h"

namespace koord::roles::koordlet::prediction {

inline constexpr std::uint32_t kModelCheckpointVersion = 1;
/// A model's file takes about 2 KiB with every bucket set; larger files are refused unread.
inline constexpr std::size_t kMaxModelCheckpointBytes = std::size_t{64} << 10;
/// At most this many files are read at startup; a node holds a few hundred pods.
inline constexpr std::size_t kMaxModelCheckpointFiles = 4096;
/// "<key>.ckpt". Other files in the directory are left alone.
inline constexpr std::string_view kModelCheckpointSuffix = ".ckpt";

struct ModelCheckpoint {
  /// The model's key (a pod UID or a node item key); also the file's name.
  std::string key;
  /// When the model last took a sample.
  TimePoint last_updated;
  HistogramCheckpoint cpu;
  HistogramCheckpoint memory;
  friend bool operator==(const ModelCheckpoint&, const ModelCheckpoint&) = default;
};

/// Keys that can name a file: 1 to 253 of [A-Za-z0-9._-], not starting with a dot (pod UIDs
/// and Koordinator's "__node-...__" keys all qualify).
bool validModelKey(std::string_view key);

/// {"version":1,"key":"...","lastUpdated":<unix ms>,"cpu":{"layout":<buckets>,
/// "referenceTime":<unix ms>,"totalWeight":"<float as text>","weights":[[bucket,weight],...]},
/// "memory":{...}}. "layout" is the bucket count of the histogram it was saved from, so a
/// build with another bucket layout refuses the file instead of misreading it.
std::string encodeModelCheckpoint(const ModelCheckpoint& checkpoint);

/// Checks everything: size, JSON, version, key, layouts, bucket bounds and order, weights.
/// Histogram-level checks (HistogramCheckpoint in DecayingHistogram::load) run here too.
Expected<ModelCheckpoint> decodeModelCheckpoint(std::string_view bytes);

/// What loadAll() found.
struct LoadedCheckpoints {
  std::vector<ModelCheckpoint> checkpoints;
  /// (file name, why) for each file refused; the caller removes them.
  std::vector<std::pair<std::string, std::string>> refused;
  /// Keys of refused files whose name is a valid key (so remove() can take them).
  std::vector<std::string> refused_keys;
  /// Leftover temporary files of an interrupted write, removed.
  std::size_t temporaries_removed = 0;
  /// Files beyond kMaxModelCheckpointFiles, left unread.
  std::size_t skipped = 0;
  /// The directory does not exist (nothing was ever written).
  bool missing = false;
  /// The directory could not be listed; why.
  std::string error;
};

class ModelCheckpointStore {
 public:
  explicit ModelCheckpointStore(std::filesystem::path dir);

  /// Writes dir/<key>.ckpt through a temporary file, fsync and rename, creating dir if needed.
  Expected<void> save(const ModelCheckpoint& checkpoint) const;
  /// Removes dir/<key>.ckpt; a missing file is not an error.
  Expected<void> remove(std::string_view key) const;
  /// Reads every dir/*.ckpt (in name order, up to kMaxModelCheckpointFiles).
  LoadedCheckpoints loadAll() const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path fileOf(std::string_view key) const;

  std::filesystem::path dir_;
};

}  // namespace koord::roles::koordlet::prediction
