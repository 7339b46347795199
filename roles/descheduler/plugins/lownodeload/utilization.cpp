// Threshold arithmetic and the args pieces LowNodeLoad and the nodeutilization plugins share.
#include "plugins/lownodeload/utilization.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/object_member.h"

namespace koord::roles::descheduler::utilization {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

std::int64_t valueOr0(const ResourceAmounts& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

double clampPercent(double p) {
  return std::clamp(p, kMinPercent, kMaxPercent);
}

double percentOr0(const Thresholds& t, std::string_view name) {
  auto it = t.find(name);
  return it == t.end() ? 0 : it->second;
}

}  // namespace

std::string childPath(std::string_view path, std::string_view name) {
  if (path.empty())
    return std::string(name);
  return std::string(path) + "." + std::string(name);
}

std::int64_t amountOf(const ResourceAmounts& allocatable, std::string_view resource,
                      double percent) {
  return static_cast<std::int64_t>(percent * 0.01 *
                                   static_cast<double>(valueOr0(allocatable, resource)));
}

double percentOf(std::int64_t used, std::int64_t capacity) {
  if (capacity == 0)
    return 0;
  return 100.0 * static_cast<double>(used) / static_cast<double>(capacity);
}

Thresholds averagePercent(
    const std::vector<std::pair<const ResourceAmounts*, const Node*>>& nodes) {
  Thresholds sum;
  for (const auto& [usage, node] : nodes) {
    for (const auto& [name, used] : *usage) {
      const std::int64_t capacity = valueOr0(node->allocatable, name);
      if (capacity != 0)
        sum[name] += percentOf(used, capacity);
    }
  }
  for (auto& [name, total] : sum)
    total /= static_cast<double>(nodes.size());
  return sum;
}

NodeThresholds nodeThresholds(const Node& node, const std::vector<std::string>& names,
                              const Thresholds& low, const Thresholds& high, bool deviation,
                              const Thresholds& average) {
  NodeThresholds t;
  for (const auto& name : names) {
    const double lo = percentOr0(low, name);
    const double hi = percentOr0(high, name);
    if (!deviation) {
      t.low[name] = amountOf(node.allocatable, name, lo);
      t.high[name] = amountOf(node.allocatable, name, hi);
    } else if (lo == kMinPercent) {
      // No deviation asked for this resource: it never makes a node low or high.
      t.low[name] = valueOr0(node.allocatable, name);
      t.high[name] = t.low[name];
    } else {
      const double avg = percentOr0(average, name);
      t.low[name] = amountOf(node.allocatable, name, clampPercent(avg - lo));
      t.high[name] = amountOf(node.allocatable, name, clampPercent(avg + hi));
    }
  }
  return t;
}

bool atOrUnder(const ResourceAmounts& usage, const ResourceAmounts& thresholds) {
  for (const auto& [name, limit] : thresholds) {
    auto it = usage.find(name);
    if (it != usage.end() && it->second > limit)
      return false;
  }
  return true;
}

std::vector<std::string> overResources(const ResourceAmounts& usage,
                                       const ResourceAmounts& thresholds) {
  std::vector<std::string> out;
  for (const auto& [name, limit] : thresholds) {
    auto it = usage.find(name);
    if (it != usage.end() && it->second > limit)
      out.push_back(name);
  }
  return out;
}

std::string describeOver(const std::vector<std::string>& over, const ResourceAmounts& usage,
                         const ResourceAmounts& thresholds, const ResourceAmounts& allocatable) {
  std::string out;
  for (const auto& name : over) {
    const std::int64_t capacity = valueOr0(allocatable, name);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s %.2f%% > %.2f%%", out.empty() ? "" : ", ", name.c_str(),
                  percentOf(valueOr0(usage, name), capacity),
                  percentOf(valueOr0(thresholds, name), capacity));
    out += buf;
  }
  return out;
}

Expected<std::optional<Thresholds>> thresholdsField(const json::object& o, std::string_view name,
                                                    std::string_view path) {
  return pluginkit::objectMember<Thresholds>(
      o, name, path, [](const json::object& obj, const std::string& here) -> Expected<Thresholds> {
        Thresholds out;
        for (const auto& member : obj) {
          const std::string at = here + "[" + std::string(member.key()) + "]";
          if (!member.value().is_number())
            return strict::fieldError(at, "expected a number");
          const double p = member.value().to_number<double>();
          if (p < kMinPercent || p > kMaxPercent)
            return strict::fieldError(at, "percentage must be within [0, 100]");
          out[std::string(member.key())] = p;
        }
        return out;
      });
}

Expected<std::int32_t> numberOfNodesField(const json::object& args) {
  auto n = strict::int32Field(args, "numberOfNodes", "");
  if (!n)
    return n.error();
  if (n->value_or(0) < 0)
    return strict::fieldError("numberOfNodes", "must be greater than or equal to 0");
  return n->value_or(0);
}

bool Namespaces::allows(std::string_view ns) const {
  auto has = [ns](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), ns) != v.end();
  };
  if (!include.empty())
    return has(include);
  return !has(exclude);
}

Expected<std::optional<Namespaces>> namespacesField(const json::object& o, std::string_view name,
                                                    std::string_view path) {
  return pluginkit::objectMember<Namespaces>(
      o, name, path, [](const json::object& obj, const std::string& here) -> Expected<Namespaces> {
        if (auto ok = strict::rejectUnknownFields(obj, {"include", "exclude"}, here); !ok)
          return ok.error();
        Namespaces ns;
        auto include = kube::jsonfields::stringList(obj, "include", here);
        if (!include)
          return include.error();
        auto exclude = kube::jsonfields::stringList(obj, "exclude", here);
        if (!exclude)
          return exclude.error();
        ns.include = std::move(*include);
        ns.exclude = std::move(*exclude);
        if (!ns.include.empty() && !ns.exclude.empty())
          return strict::fieldError(here, "only one of include and exclude can be set");
        return ns;
      });
}

}  // namespace koord::roles::descheduler::utilization
