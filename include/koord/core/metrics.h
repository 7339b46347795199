// A Prometheus metrics registry (counters, gauges, histograms, each with labels) and its text
// exposition format (version 0.0.4), served at /metrics by every role.
#pragma once

#include <atomic>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace koord::metrics {

/// A monotonically increasing value. Lock-free; keep the reference, do not look it up per call.
class Counter {
 public:
  void inc(double delta = 1.0);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double delta);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// Cumulative buckets as Prometheus defines them; `le` upper bounds, +Inf implied.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  /// `n` observations of `v` at once (n calls timed together, each counted at their mean).
  void observe(double v, uint64_t n);
  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // bounds.size() + 1 entries, last one is +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // non-cumulative, bounds_.size() + 1
  std::atomic<double> sum_{0.0};
  std::atomic<uint64_t> count_{0};
};

/// Default latency buckets in seconds (Prometheus client defaults, 5 ms to 10 s).
std::vector<double> defaultBuckets();
/// `count` buckets starting at `start`, each `factor` times the previous.
std::vector<double> exponentialBuckets(double start, double factor, int count);

using LabelValues = std::vector<std::string>;

/// A metric name with fixed label names; children are created on first use of a label set and
/// live as long as the registry (or until remove()), so returned references stay valid.
template <typename T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> buckets = {});
  /// Throws std::invalid_argument when the number of values differs from the label names.
  T& with(const LabelValues& values);
  T& with(std::initializer_list<std::string_view> values);
  /// Drops a child (a pod that left the node), so per-object series do not pile up. References
  /// to it must not be used afterwards. Returns whether it existed.
  bool remove(const LabelValues& values);

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& labelNames() const { return label_names_; }
  /// Calls fn(values, child) for each child in label order, under the family's lock.
  template <typename Fn>
  void forEach(Fn&& fn) const {
    std::lock_guard lock(mu_);
    for (const auto& [values, child] : children_)
      fn(values, *child);
  }

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
  std::vector<double> buckets_;
  mutable std::mutex mu_;
  std::map<LabelValues, std::unique_ptr<T>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

/// Hands a collected family's series to the exposition: label values in label-name order.
using SeriesSink = std::function<void(std::span<const std::string_view> values, double value)>;

/// Ties a collected family to its owner: once this is destroyed or reset the family renders no
/// series, and another owner may register the name again.
class CollectedFamily {
 public:
  struct State;
  CollectedFamily() = default;
  explicit CollectedFamily(std::shared_ptr<State> state) : state_(std::move(state)) {}
  CollectedFamily(CollectedFamily&&) noexcept = default;
  CollectedFamily& operator=(CollectedFamily&& other) noexcept;
  CollectedFamily(const CollectedFamily&) = delete;
  CollectedFamily& operator=(const CollectedFamily&) = delete;
  ~CollectedFamily() { reset(); }
  void reset();

 private:
  std::shared_ptr<State> state_;
};

/// Owns metric families. Registering a name twice with the same type and labels returns the
/// existing family; a clash (other type or labels) or an invalid name throws.
class Registry {
 public:
  CounterFamily& counter(std::string_view name, std::string_view help,
                         std::vector<std::string> label_names = {});
  GaugeFamily& gauge(std::string_view name, std::string_view help,
                     std::vector<std::string> label_names = {});
  HistogramFamily& histogram(std::string_view name, std::string_view help,
                             std::vector<std::string> label_names = {},
                             std::vector<double> buckets = defaultBuckets());

  /// A gauge family whose series are produced by `collect` at each scrape, for per-object series
  /// whose owner already holds the values: the registry keeps nothing per series. `collect` runs
  /// on the scraping thread. Throws, like the others, on a clash or while another owner holds it.
  [[nodiscard]] CollectedFamily collectedGauge(std::string_view name, std::string_view help,
                                               std::vector<std::string> label_names,
                                               std::function<void(const SeriesSink&)> collect);
  /// collectedGauge for a cumulative value the owner keeps (TYPE counter).
  [[nodiscard]] CollectedFamily collectedCounter(std::string_view name, std::string_view help,
                                                 std::vector<std::string> label_names,
                                                 std::function<void(const SeriesSink&)> collect);

  /// The whole registry in the text exposition format, families sorted by name.
  std::string render() const;

  /// The process-wide registry every role serves at /metrics.
  static Registry& global();

 private:
  struct Entry;
  CollectedFamily collected(std::string_view name, std::string_view help,
                            std::vector<std::string> label_names,
                            std::function<void(const SeriesSink&)> collect, bool counter);
  template <typename F>
  F& getOrCreate(std::string_view name, std::string_view help, std::vector<std::string> label_names,
                 std::vector<double> buckets, int kind);
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> families_;
  // The last exposition's size: the next one is reserved at once instead of doubling its way
  // there, which would hold old and new buffers together at every scrape.
  mutable std::atomic<std::size_t> last_render_size_{0};
};

/// Escapes a label value for the exposition format (backslash, double quote, newline).
std::string escapeLabelValue(std::string_view v);
/// True if `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*.
bool validMetricName(std::string_view name);

}  // namespace koord::metrics
