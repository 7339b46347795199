#include "slo_config_source.h"

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/kube/event_recorder.h"

namespace koord::roles::manager {

SloConfigSource::SloConfigSource(std::string namespace_, std::string name,
                                 kube::EventRecorder* recorder, metrics::Registry& registry)
    : namespace_(std::move(namespace_)),
      name_(std::move(name)),
      recorder_(recorder),
      parse_errors_(registry
                        .counter("koord_manager_slo_config_parse_errors_total",
                                 "slo-controller-config contents that failed to parse and were "
                                 "ignored (the last good configuration stays in effect)")
                        .with({})),
      valid_(registry
                 .gauge("koord_manager_slo_config_valid",
                        "1 when the last slo-controller-config seen parsed, 0 when it did not")
                 .with({})) {}

void SloConfigSource::update(const ConfigMapData& cm) {
  std::string fingerprint;
  for (const auto& [k, v] : cm.data)
    fingerprint += fmt::format("{}:{}\n{}\n", k.size(), k, v);
  {
    std::lock_guard lock(mu_);
    // Informer resyncs and metadata-only updates must not re-announce the same configuration.
    if (config_ && fingerprint == last_data_fingerprint_ && last_error_.empty())
      return;
    last_data_fingerprint_ = fingerprint;
  }
  auto parsed = apis::parseSloControllerConfig(cm.data);
  if (!parsed) {
    const std::string message = parsed.error().message;
    bool first_report = false;
    {
      std::lock_guard lock(mu_);
      first_report = last_error_ != message;
      last_error_ = message;
    }
    parse_errors_.inc();
    valid_.set(0);
    if (first_report) {
      KOORD_LOG_ERROR("ConfigMap {}/{}: invalid, keeping the last good configuration: {}",
                      cm.namespace_, cm.name, message);
      if (recorder_ != nullptr) {
        kube::ObjectReference ref{"ConfigMap", "v1", cm.namespace_, cm.name, cm.uid, "", ""};
        recorder_->record(
            ref, kube::EventType::kWarning, "InvalidSLOConfig",
            fmt::format("ignored, the last valid configuration stays in effect: {}", message));
      }
    }
    return;
  }
  {
    std::lock_guard lock(mu_);
    last_error_.clear();
  }
  valid_.set(1);
  KOORD_LOG_INFO("ConfigMap {}/{}: configuration applied", cm.namespace_, cm.name);
  apply(std::make_shared<const apis::SloControllerConfig>(std::move(*parsed)));
}

void SloConfigSource::remove() {
  {
    std::lock_guard lock(mu_);
    last_error_.clear();
    last_data_fingerprint_.clear();
  }
  valid_.set(1);
  KOORD_LOG_INFO("ConfigMap {}/{}: gone, Koordinator's defaults apply", namespace_, name_);
  apply(std::make_shared<const apis::SloControllerConfig>(
      apis::parseSloControllerConfig({}).value()));
}

void SloConfigSource::markSyncedWithoutConfigMap() {
  {
    std::lock_guard lock(mu_);
    if (config_ || !last_error_.empty())
      return;
  }
  valid_.set(1);
  apply(std::make_shared<const apis::SloControllerConfig>(
      apis::parseSloControllerConfig({}).value()));
}

std::optional<std::shared_ptr<const apis::SloControllerConfig>> SloConfigSource::current() const {
  std::lock_guard lock(mu_);
  if (!config_)
    return std::nullopt;
  return config_;
}

std::string SloConfigSource::lastError() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void SloConfigSource::onChange(std::function<void()> listener) {
  std::lock_guard lock(mu_);
  listeners_.push_back(std::move(listener));
}

void SloConfigSource::apply(std::shared_ptr<const apis::SloControllerConfig> config) {
  std::vector<std::function<void()>> listeners;
  {
    std::lock_guard lock(mu_);
    config_ = std::move(config);
    listeners = listeners_;
  }
  for (auto& l : listeners)
    l();
}

}  // namespace koord::roles::manager
