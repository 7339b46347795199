// Koordinator's peak predict server: per pod, per priority class, for the node and for the
// system overhead a decaying histogram of CPU and memory usage, trained once per interval,
// expired when no longer trained and checkpointed to disk a few models at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "prediction/histogram.h"
#include "prediction/model_checkpoint.h"
#include "prediction/prediction_config.h"

namespace koord::roles::koordlet::prediction {

/// One percentile of a model: CPU in whole milli-cores, memory in whole bytes (truncated, as
/// Koordinator's int64 conversions do).
struct ResourcePeak {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  friend bool operator==(const ResourcePeak&, const ResourcePeak&) = default;
};

/// Koordinator's result keys "p60", "p90", "p95", "p98", "max".
struct Prediction {
  ResourcePeak p60, p90, p95, p98, max;
};

/// Usage in cores and bytes.
struct Usage {
  double cpu = 0;
  double memory = 0;
};

struct PodUsage {
  std::string uid;
  apis::PriorityClass priority = apis::PriorityClass::kNone;
  Usage usage;
};

/// One training round's input: the pods with a usage in the window (a pod without one is left
/// out of every sum), and the node's usage per resource where known.
struct TrainingRound {
  std::vector<PodUsage> pods;
  std::optional<double> node_cpu;
  std::optional<double> node_memory;
};

struct RestoreReport {
  std::size_t restored = 0;
  /// Checkpoints of models no pod or node item has now: files removed.
  std::size_t unknown = 0;
  /// (file, why) of the files refused (corrupt, oversized, another version or layout, a time
  /// in the future); removed where the name allowed it.
  std::vector<std::pair<std::string, std::string>> refused;
  std::size_t temporaries_removed = 0;
  std::size_t skipped = 0;
  bool missing = false;
  std::string error;
};

struct CheckpointReport {
  std::size_t written = 0;
  std::size_t failed = 0;
  /// The first failure's message ("<file>: ...").
  std::string first_error;
};

/// Thread-safe: one lock over the models; checkpoint files are written and removed outside it.
class PeakPredictServer {
 public:
  /// Throws std::invalid_argument when a half-life is not positive.
  explicit PeakPredictServer(PredictionConfig config);

  const PredictionConfig& config() const { return config_; }

  /// Koordinator's training(): each pod's model takes its usage; each priority class's node
  /// item takes the sum over its pods (0 without any); the node's model takes the node usage
  /// (only when both resources are known); "sys" takes node - all pods, floored at 0 (a node
  /// resource not known counts as 0 there). Marks the server synced.
  void train(const TrainingRound& round, TimePoint now);

  /// nullopt when no model has that key.
  std::optional<Prediction> prediction(std::string_view key) const;
  /// A training round ran (Koordinator's HasSynced); garbage collection and checkpoints wait
  /// for it.
  bool hasSynced() const;
  std::size_t modelCount() const;
  std::vector<std::string> modelKeys() const;

  /// Drops the models not trained for model_expiration and removes their checkpoint files;
  /// returns their keys. Does nothing before the first round.
  std::vector<std::string> collectGarbage(TimePoint now);

  /// Writes up to checkpoint_max_per_step models whose last checkpoint is at least
  /// checkpoint_interval old, the longest-waiting first. A failed write still counts as the
  /// model's checkpoint, as in Koordinator, so one bad file cannot hold up the others.
  CheckpointReport checkpoint(TimePoint now);

  /// Loads the checkpoint directory once the pods are known (call before the first round).
  /// Restored: checkpoints of `known_pods`, of the node (when `node_known`), of "sys" and of
  /// each priority class. Files of other keys and refused files are removed. A model's last
  /// update after `now` reads as `now`; a histogram reference time more than one half-life
  /// after `now` is refused (its samples would weigh nothing against new ones).
  RestoreReport restore(const std::set<std::string, std::less<>>& known_pods, bool node_known,
                        TimePoint now);

 private:
  struct Model {
    DecayingHistogram cpu;
    DecayingHistogram memory;
    TimePoint last_updated{};
    TimePoint last_checkpointed{};
  };

  Model newModel() const;
  void updateLocked(const std::string& key, double cpu, double memory, TimePoint now);

  const PredictionConfig config_;
  const ModelCheckpointStore store_;
  mutable std::mutex mu_;
  std::map<std::string, Model, std::less<>> models_;
  bool synced_ = false;
};

}  // namespace koord::roles::koordlet::prediction
