#include "koord/core/feature_gate.h"

#include <fmt/format.h>

#include <algorithm>

#include "koord/core/strconv.h"

namespace koord {
namespace {

constexpr std::string_view kAllAlpha = "AllAlpha";
constexpr std::string_view kAllBeta = "AllBeta";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string_view stageName(FeatureStage s) {
  switch (s) {
    case FeatureStage::kAlpha:
      return "ALPHA";
    case FeatureStage::kBeta:
      return "BETA";
    case FeatureStage::kGA:
      return "";
    case FeatureStage::kDeprecated:
      return "DEPRECATED";
  }
  return "";
}

}  // namespace

FeatureGate::FeatureGate(std::vector<FeatureSpec> known) {
  known_.emplace(std::string(kAllAlpha),
                 FeatureSpec{std::string(kAllAlpha), false, FeatureStage::kAlpha, false});
  known_.emplace(std::string(kAllBeta),
                 FeatureSpec{std::string(kAllBeta), false, FeatureStage::kBeta, false});
  for (auto& spec : known) {
    std::string name = spec.name;
    if (!known_.emplace(name, std::move(spec)).second) {
      throw std::invalid_argument(fmt::format("feature gate {} declared twice", name));
    }
  }
}

void FeatureGate::set(std::string_view spec) {
  std::map<std::string, bool> values;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw FeatureGateError(fmt::format("missing bool value for feature gate {:?}", item));
    }
    std::string_view name = trim(item.substr(0, eq));
    std::string_view value = trim(item.substr(eq + 1));
    std::optional<bool> b = parseGoBool(value);
    if (!b) {
      throw FeatureGateError(
          fmt::format("invalid value of feature gate {}: {:?} is not a bool", name, value));
    }
    values[std::string(name)] = *b;
  }
  set(values);
}

void FeatureGate::set(const std::map<std::string, bool>& values) {
  for (const auto& [name, value] : values) {
    auto it = known_.find(name);
    if (it == known_.end()) {
      throw FeatureGateError(fmt::format("unrecognized feature gate: {}", name));
    }
    if (it->second.lock_to_default && value != it->second.default_value) {
      throw FeatureGateError(
          fmt::format("cannot set feature gate {} to {}, feature is locked to {}", name, value,
                      it->second.default_value));
    }
  }
  for (const auto& [name, value] : values)
    explicit_[name] = value;
}

bool FeatureGate::known(std::string_view name) const {
  return known_.count(name) > 0;
}

bool FeatureGate::enabled(std::string_view name) const {
  if (!known_.contains(name))
    throw std::logic_error(fmt::format("feature gate {} is not registered", name));
  {
    std::lock_guard lock(read_->mu);
    if (!read_->names.contains(name))
      read_->names.emplace(name);
  }
  return value(name);
}

bool FeatureGate::value(std::string_view name) const {
  auto it = known_.find(name);
  if (it == known_.end())
    throw std::logic_error(fmt::format("feature gate {} is not registered", name));
  if (auto e = explicit_.find(name); e != explicit_.end())
    return e->second;
  const FeatureSpec& spec = it->second;
  if (name != kAllAlpha && name != kAllBeta) {
    auto all = [this](std::string_view gate) {
      auto e = explicit_.find(gate);
      return e != explicit_.end() && e->second;
    };
    if (spec.stage == FeatureStage::kAlpha && all(kAllAlpha))
      return true;
    if (spec.stage == FeatureStage::kBeta && all(kAllBeta))
      return true;
  }
  return spec.default_value;
}

std::vector<std::string> FeatureGate::setButUnread() const {
  std::vector<std::string> out;
  std::lock_guard lock(read_->mu);
  for (const auto& [name, value] : explicit_) {
    if (name == kAllAlpha || name == kAllBeta)
      continue;
    if (value != known_.at(name).default_value && !read_->names.contains(name))
      out.push_back(fmt::format("{}={}", name, value));
  }
  return out;
}

void FeatureGate::markUnavailable(std::string_view name, std::string why) const {
  if (!known_.contains(name))
    throw std::logic_error(fmt::format("feature gate {} is not registered", name));
  std::lock_guard lock(read_->mu);
  read_->unavailable.insert_or_assign(std::string(name), std::move(why));
}

std::vector<FeatureGate::Effect> FeatureGate::effects() const {
  std::vector<Effect> out;
  std::lock_guard lock(read_->mu);
  for (const auto& [name, spec] : known_) {
    if (name == kAllAlpha || name == kAllBeta)
      continue;
    Effect e;
    e.name = name;
    e.enabled = value(name);
    if (e.enabled) {
      if (auto u = read_->unavailable.find(name); u != read_->unavailable.end())
        e.why = u->second;
      else if (!read_->names.contains(name))
        e.why = "not implemented in koord yet";
      e.effective = e.why.empty();
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::map<std::string, bool> FeatureGate::effective() const {
  std::map<std::string, bool> out;
  for (const auto& [name, spec] : known_)
    out[name] = value(name);
  return out;
}

std::vector<std::string> FeatureGate::helpLines() const {
  std::vector<std::string> out;
  for (const auto& [name, spec] : known_) {
    if (spec.stage == FeatureStage::kGA && spec.lock_to_default)
      continue;  // nothing to set
    std::string_view stage = stageName(spec.stage);
    if (name == kAllAlpha || name == kAllBeta) {
      out.push_back(fmt::format("{}=true|false ({} - default=false)", name, stage));
    } else if (stage.empty()) {
      out.push_back(fmt::format("{}=true|false (default={})", name, spec.default_value));
    } else {
      out.push_back(
          fmt::format("{}=true|false ({} - default={})", name, stage, spec.default_value));
    }
  }
  return out;
}

}  // namespace koord
