// The manager's view of slo-controller-config: the last configuration that parsed, kept when
// a malformed one arrives (which is reported as an Event and a metric, never acted on).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "koord/apis/slo_config.h"

namespace koord::kube {
class EventRecorder;
}
namespace koord::metrics {
class Registry;
class Counter;
class Gauge;
}  // namespace koord::metrics

namespace koord::roles::manager {

/// The ConfigMap as the informer keeps it.
struct ConfigMapData {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::map<std::string, std::string, std::less<>> data;
};

class SloConfigSource {
 public:
  /// `recorder` may be null (tests); events then only go to the log.
  SloConfigSource(std::string namespace_, std::string name, kube::EventRecorder* recorder,
                  metrics::Registry& registry);

  /// The ConfigMap appeared or changed. Thread-safe.
  void update(const ConfigMapData& cm);
  /// The ConfigMap is gone: Koordinator's defaults apply again.
  void remove();
  /// The informer listed and found no ConfigMap: defaults apply (a valid configuration).
  void markSyncedWithoutConfigMap();

  /// The configuration to act on; nullopt until one parsed (a cluster whose first ConfigMap is
  /// malformed gets no action until it is fixed, rather than defaults it did not ask for).
  std::optional<std::shared_ptr<const apis::SloControllerConfig>> current() const;
  /// The error of the last ConfigMap seen, "" when it parsed.
  std::string lastError() const;

  /// Called (outside the lock) after the configuration in effect changed.
  void onChange(std::function<void()> listener);

 private:
  void apply(std::shared_ptr<const apis::SloControllerConfig> config);

  const std::string namespace_;
  const std::string name_;
  kube::EventRecorder* recorder_;
  metrics::Counter& parse_errors_;
  metrics::Gauge& valid_;

  mutable std::mutex mu_;
  std::shared_ptr<const apis::SloControllerConfig> config_;
  std::string last_error_;
  std::string last_data_fingerprint_;
  std::vector<std::function<void()>> listeners_;
};

}  // namespace koord::roles::manager
