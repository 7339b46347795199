#include "koord/core/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

namespace koord::metrics {

void Counter::inc(double delta) {
  // A counter never goes down; a negative delta is a programming error we refuse quietly
  // rather than corrupting the series every dashboard's rate() relies on.
  if (delta < 0 || std::isnan(delta))
    return;
  value_.fetch_add(delta, std::memory_order_relaxed);
}

void Gauge::add(double delta) {
  value_.fetch_add(delta, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  if (!bounds_.empty() && std::isinf(bounds_.back()))
    bounds_.pop_back();
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
}

void Histogram::observe(double v) {
  observe(v, 1);
}

void Histogram::observe(double v, uint64_t n) {
  if (n == 0)
    return;
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);  // first bound >= v: le semantics
  buckets_[static_cast<size_t>(it - bounds_.begin())].fetch_add(n, std::memory_order_relaxed);
  sum_.fetch_add(v * static_cast<double>(n), std::memory_order_relaxed);
  count_.fetch_add(n, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  s.cumulative.resize(bounds_.size() + 1);
  uint64_t acc = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    acc += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = acc;
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  // Count equals the +Inf bucket by definition; derive it so a concurrent observe cannot make
  // the exposition inconsistent.
  s.count = acc;
  return s;
}

std::vector<double> defaultBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> exponentialBuckets(double start, double factor, int count) {
  if (start <= 0 || factor <= 1 || count < 1) {
    throw std::invalid_argument("exponentialBuckets needs start > 0, factor > 1, count >= 1");
  }
  std::vector<double> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i, start *= factor)
    out.push_back(start);
  return out;
}

bool validMetricName(std::string_view name) {
  if (name.empty())
    return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok)
      return false;
  }
  return true;
}

namespace {

bool validLabelName(std::string_view name) {
  if (name.empty() || name.find(':') != std::string_view::npos)
    return false;
  if (name.size() >= 2 && name[0] == '_' && name[1] == '_')
    return false;  // reserved
  return validMetricName(name);
}

std::string escapeHelp(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string formatValue(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

template <typename Values>
void appendLabels(std::string& out, const std::vector<std::string>& names, const Values& values,
                  std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty())
    return;
  out += '{';
  bool first = true;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!first)
      out += ',';
    first = false;
    fmt::format_to(std::back_inserter(out), "{}=\"{}\"", names[i], escapeLabelValue(values[i]));
  }
  if (!extra_name.empty()) {
    if (!first)
      out += ',';
    fmt::format_to(std::back_inserter(out), "{}=\"{}\"", extra_name, extra_value);
  }
  out += '}';
}

}  // namespace

std::string escapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

template <typename T>
Family<T>::Family(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> buckets)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      buckets_(std::move(buckets)) {}

template <typename T>
T& Family<T>::with(const LabelValues& values) {
  if (values.size() != label_names_.size()) {
    throw std::invalid_argument(fmt::format("metric {}: {} label values for {} label names", name_,
                                            values.size(), label_names_.size()));
  }
  std::lock_guard lock(mu_);
  auto it = children_.find(values);
  if (it != children_.end())
    return *it->second;
  std::unique_ptr<T> child;
  if constexpr (std::is_same_v<T, Histogram>) {
    child = std::make_unique<Histogram>(buckets_);
  } else {
    child = std::make_unique<T>();
  }
  return *children_.emplace(values, std::move(child)).first->second;
}

template <typename T>
T& Family<T>::with(std::initializer_list<std::string_view> values) {
  LabelValues v;
  v.reserve(values.size());
  for (auto s : values)
    v.emplace_back(s);
  return with(v);
}

template <typename T>
bool Family<T>::remove(const LabelValues& values) {
  std::lock_guard lock(mu_);
  return children_.erase(values) > 0;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct CollectedFamily::State {
  std::string name;
  std::string help;
  bool counter = false;
  std::vector<std::string> label_names;
  // Held while collecting, so an owner going away waits for a scrape in progress.
  std::mutex mu;
  std::function<void(const SeriesSink&)> collect;
};

CollectedFamily& CollectedFamily::operator=(CollectedFamily&& other) noexcept {
  if (this != &other) {
    reset();
    state_ = std::move(other.state_);
  }
  return *this;
}

void CollectedFamily::reset() {
  if (!state_)
    return;
  {
    std::lock_guard lock(state_->mu);
    state_->collect = nullptr;
  }
  state_.reset();
}

struct Registry::Entry {
  std::variant<std::unique_ptr<CounterFamily>, std::unique_ptr<GaugeFamily>,
               std::unique_ptr<HistogramFamily>, std::shared_ptr<CollectedFamily::State>>
      family;
};

namespace {

void validateNames(std::string_view name, const std::vector<std::string>& label_names,
                   bool histogram) {
  if (!validMetricName(name))
    throw std::invalid_argument(fmt::format("bad metric name {}", name));
  for (const auto& l : label_names) {
    if (!validLabelName(l) || (histogram && l == "le")) {
      throw std::invalid_argument(fmt::format("metric {}: bad label name {}", name, l));
    }
  }
}

}  // namespace

template <typename F>
F& Registry::getOrCreate(std::string_view name, std::string_view help,
                         std::vector<std::string> label_names, std::vector<double> buckets,
                         int kind) {
  validateNames(name, label_names, kind == 2);
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    auto* existing = std::get_if<std::unique_ptr<F>>(&it->second->family);
    if (existing == nullptr || (*existing)->labelNames() != label_names) {
      throw std::invalid_argument(
          fmt::format("metric {} registered twice with different type or labels", name));
    }
    return **existing;
  }
  auto entry = std::make_shared<Entry>();
  auto family = std::make_unique<F>(std::string(name), std::string(help), std::move(label_names),
                                    std::move(buckets));
  F& ref = *family;
  entry->family = std::move(family);
  families_.emplace(std::string(name), std::move(entry));
  return ref;
}

CounterFamily& Registry::counter(std::string_view name, std::string_view help,
                                 std::vector<std::string> label_names) {
  return getOrCreate<CounterFamily>(name, help, std::move(label_names), {}, 0);
}

GaugeFamily& Registry::gauge(std::string_view name, std::string_view help,
                             std::vector<std::string> label_names) {
  return getOrCreate<GaugeFamily>(name, help, std::move(label_names), {}, 1);
}

HistogramFamily& Registry::histogram(std::string_view name, std::string_view help,
                                     std::vector<std::string> label_names,
                                     std::vector<double> buckets) {
  return getOrCreate<HistogramFamily>(name, help, std::move(label_names), std::move(buckets), 2);
}

CollectedFamily Registry::collectedGauge(std::string_view name, std::string_view help,
                                         std::vector<std::string> label_names,
                                         std::function<void(const SeriesSink&)> collect) {
  return collected(name, help, std::move(label_names), std::move(collect), false);
}

CollectedFamily Registry::collectedCounter(std::string_view name, std::string_view help,
                                           std::vector<std::string> label_names,
                                           std::function<void(const SeriesSink&)> collect) {
  return collected(name, help, std::move(label_names), std::move(collect), true);
}

CollectedFamily Registry::collected(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names,
                                    std::function<void(const SeriesSink&)> collect, bool counter) {
  validateNames(name, label_names, false);
  if (!collect)
    throw std::invalid_argument(fmt::format("metric {}: no collect function", name));
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    auto* existing = std::get_if<std::shared_ptr<CollectedFamily::State>>(&it->second->family);
    if (existing == nullptr || (*existing)->label_names != label_names ||
        (*existing)->counter != counter) {
      throw std::invalid_argument(
          fmt::format("metric {} registered twice with different type or labels", name));
    }
    std::lock_guard state_lock((*existing)->mu);
    if ((*existing)->collect) {
      throw std::invalid_argument(
          fmt::format("metric {} is already collected by another owner", name));
    }
    (*existing)->help = std::string(help);
    (*existing)->collect = std::move(collect);
    return CollectedFamily(*existing);
  }
  auto state = std::make_shared<CollectedFamily::State>();
  state->name = std::string(name);
  state->help = std::string(help);
  state->label_names = std::move(label_names);
  state->counter = counter;
  state->collect = std::move(collect);
  auto entry = std::make_shared<Entry>();
  entry->family = state;
  families_.emplace(std::string(name), std::move(entry));
  return CollectedFamily(std::move(state));
}

std::string Registry::render() const {
  std::vector<std::shared_ptr<Entry>> entries;
  {
    std::lock_guard lock(mu_);
    entries.reserve(families_.size());
    for (const auto& [name, e] : families_)
      entries.push_back(e);
  }
  std::string out;
  const std::size_t hint = last_render_size_.load(std::memory_order_relaxed);
  out.reserve(hint + hint / 8);
  auto header = [&out](const auto& f, std::string_view type) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", f.name(),
                   escapeHelp(f.help()), f.name(), type);
  };
  for (const auto& e : entries) {
    std::visit(
        [&](const auto& fam) {
          using F = std::decay_t<decltype(*fam)>;
          if constexpr (std::is_same_v<F, CollectedFamily::State>) {
            std::lock_guard lock(fam->mu);
            fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", fam->name,
                           escapeHelp(fam->help), fam->name, fam->counter ? "counter" : "gauge");
            if (!fam->collect)
              return;
            const auto& names = fam->label_names;
            fam->collect([&](std::span<const std::string_view> values, double value) {
              // A sink called with the wrong number of values is a bug in the owner: the series
              // is left out rather than written with labels that do not line up.
              if (values.size() != names.size())
                return;
              out += fam->name;
              appendLabels(out, names, values);
              fmt::format_to(std::back_inserter(out), " {}\n", formatValue(value));
            });
          } else if constexpr (std::is_same_v<F, HistogramFamily>) {
            header(*fam, "histogram");
            fam->forEach([&](const LabelValues& values, const Histogram& h) {
              auto s = h.snapshot();
              for (size_t i = 0; i <= s.bounds.size(); ++i) {
                std::string le = i < s.bounds.size() ? formatValue(s.bounds[i]) : "+Inf";
                out += fam->name();
                out += "_bucket";
                appendLabels(out, fam->labelNames(), values, "le", le);
                fmt::format_to(std::back_inserter(out), " {}\n", s.cumulative[i]);
              }
              out += fam->name();
              out += "_sum";
              appendLabels(out, fam->labelNames(), values);
              fmt::format_to(std::back_inserter(out), " {}\n", formatValue(s.sum));
              out += fam->name();
              out += "_count";
              appendLabels(out, fam->labelNames(), values);
              fmt::format_to(std::back_inserter(out), " {}\n", s.count);
            });
          } else {
            header(*fam, std::is_same_v<F, CounterFamily> ? "counter" : "gauge");
            fam->forEach([&](const LabelValues& values, const auto& m) {
              out += fam->name();
              appendLabels(out, fam->labelNames(), values);
              fmt::format_to(std::back_inserter(out), " {}\n", formatValue(m.value()));
            });
          }
        },
        e->family);
  }
  last_render_size_.store(out.size(), std::memory_order_relaxed);
  return out;
}

Registry& Registry::global() {
  static Registry* registry = new Registry();  // never destroyed: metrics outlive static teardown
  return *registry;
}

}  // namespace koord::metrics
