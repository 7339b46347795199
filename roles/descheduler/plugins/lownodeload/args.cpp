// LowNodeLoadArgs: strict decoding, Koordinator's defaulting (defaults.go and the conversion that
// makes the top-level fields a node pool) and validation, with errors naming the field.
#include "plugins/lownodeload/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"
#include "plugins/pluginkit/object_member.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::lownodeload {

namespace json = boost::json;
namespace strict = kube::strict;
using utilization::childPath;

namespace {

Expected<std::optional<ResourceWeights>> weightsField(const json::object& o,
                                                      std::string_view path) {
  return pluginkit::objectMember<ResourceWeights>(
      o, "resourceWeights", path,
      [](const json::object& obj, const std::string& here) -> Expected<ResourceWeights> {
        ResourceWeights out;
        for (const auto& member : obj) {
          auto w = kube::jsonfields::intValue(member.value(),
                                              here + "[" + std::string(member.key()) + "]");
          if (!w)
            return w.error();
          out[std::string(member.key())] = *w;
        }
        return out;
      });
}

struct RawCondition {
  std::optional<std::chrono::nanoseconds> timeout;
  std::uint32_t abnormalities = 0;
  std::uint32_t normalities = 0;
};

Expected<std::optional<std::uint32_t>> uint32Field(const json::object& o, std::string_view name,
                                                   std::string_view path) {
  auto v = strict::int64Field(o, name, path);
  if (!v)
    return v.error();
  if (!*v)
    return std::optional<std::uint32_t>();
  if (**v < 0 || **v > 0xffffffffLL)
    return strict::fieldError(childPath(path, name), "must be within uint32's range");
  return std::optional<std::uint32_t>(static_cast<std::uint32_t>(**v));
}

Expected<std::optional<RawCondition>> conditionField(const json::object& o, std::string_view path) {
  return pluginkit::objectMember<RawCondition>(
      o, "anomalyCondition", path,
      [](const json::object& obj, const std::string& here) -> Expected<RawCondition> {
        if (auto ok = strict::rejectUnknownFields(
                obj, {"timeout", "consecutiveAbnormalities", "consecutiveNormalities"}, here);
            !ok)
          return ok.error();
        RawCondition c;
        auto timeout = strict::durationField(obj, "timeout", here);
        if (!timeout)
          return timeout.error();
        c.timeout = *timeout;
        auto ab = uint32Field(obj, "consecutiveAbnormalities", here);
        if (!ab)
          return ab.error();
        c.abnormalities = ab->value_or(0);
        auto no = uint32Field(obj, "consecutiveNormalities", here);
        if (!no)
          return no.error();
        c.normalities = no->value_or(0);
        return c;
      });
}

// Zero counts fall back to `base` (Koordinator's defaults or the top level's). Koordinator
// defaults only the first zero of the top-level condition and leaves a nil timeout, which its
// validation then refuses or its detector dereferences; each is defaulted on its own here.
LoadAnomalyCondition applyCondition(const std::optional<RawCondition>& raw,
                                    const LoadAnomalyCondition& base) {
  LoadAnomalyCondition c = base;
  if (!raw)
    return c;
  if (raw->timeout && raw->timeout->count() > 0)
    c.timeout = *raw->timeout;
  if (raw->abnormalities != 0)
    c.consecutive_abnormalities = raw->abnormalities;
  if (raw->normalities != 0)
    c.consecutive_normalities = raw->normalities;
  return c;
}

// The fields a pool and the top level share.
struct PoolFields {
  std::optional<kube::LabelSelector> node_selector;
  bool use_deviation_thresholds = false;
  std::optional<Thresholds> high, low, prod_high, prod_low;
  std::optional<ResourceWeights> weights;
  std::optional<RawCondition> condition;
};

Expected<PoolFields> readPoolFields(const json::object& o, std::string_view path) {
  PoolFields f;
  auto sel = podfilter::decodeLabelSelector(o, path, "nodeSelector");
  if (!sel)
    return sel.error();
  f.node_selector = std::move(*sel);
  auto dev = strict::boolField(o, "useDeviationThresholds", path);
  if (!dev)
    return dev.error();
  f.use_deviation_thresholds = dev->value_or(false);
  for (auto [name, out] :
       {std::pair<std::string_view, std::optional<Thresholds>*>{"highThresholds", &f.high},
        {"lowThresholds", &f.low},
        {"prodHighThresholds", &f.prod_high},
        {"prodLowThresholds", &f.prod_low}}) {
    auto t = utilization::thresholdsField(o, name, path);
    if (!t)
      return t.error();
    *out = std::move(*t);
  }
  auto w = weightsField(o, path);
  if (!w)
    return w.error();
  f.weights = std::move(*w);
  auto c = conditionField(o, path);
  if (!c)
    return c.error();
  f.condition = *c;
  return f;
}

// Koordinator's pool checks: low <= high, prod high <= node high, prod low <= prod high.
Expected<void> validatePool(const NodePool& p, std::string_view path) {
  auto check = [&](const Thresholds& lower, const Thresholds& upper, std::string_view field,
                   std::string_view what) -> Expected<void> {
    for (const auto& [name, pct] : lower) {
      auto it = upper.find(name);
      if (it != upper.end() && pct > it->second)
        return strict::fieldError(childPath(path, field) + "[" + name + "]", what);
    }
    return {};
  };
  if (auto ok = check(p.low_thresholds, p.high_thresholds, "lowThresholds",
                      "must be less than or equal to highThresholds");
      !ok)
    return ok;
  if (auto ok = check(p.prod_high_thresholds, p.high_thresholds, "prodHighThresholds",
                      "must be less than or equal to highThresholds");
      !ok)
    return ok;
  return check(p.prod_low_thresholds, p.prod_high_thresholds, "prodLowThresholds",
               "must be less than or equal to prodHighThresholds");
}

// Each object of the array member `name`, its members checked against `known`, handed to
// `read` with its path ("name[i]").
template <typename Read>
Expected<void> forEachItem(const json::object& o, std::string_view name,
                           std::initializer_list<std::string_view> known, Read&& read) {
  auto items = strict::arrayField(o, name, "");
  if (!items)
    return items.error();
  if (*items == nullptr)
    return {};
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    const std::string at = std::string(name) + "[" + std::to_string(i) + "]";
    auto item = strict::asObject((**items)[i], at);
    if (!item)
      return item.error();
    if (auto ok = strict::rejectUnknownFields(**item, known, at); !ok)
      return ok.error();
    if (auto ok = read(**item, at); !ok)
      return ok;
  }
  return {};
}

Expected<std::vector<PodSelector>> podSelectorsField(const json::object& o) {
  std::vector<PodSelector> out;
  auto ok = forEachItem(o, "podSelectors", {"name", "selector"},
                        [&](const json::object& item, const std::string& at) -> Expected<void> {
                          PodSelector s;
                          auto name = strict::stringField(item, "name", at);
                          if (!name)
                            return name.error();
                          s.name = name->value_or("");
                          auto sel = podfilter::decodeLabelSelector(item, at, "selector");
                          if (!sel)
                            return sel.error();
                          s.selector = std::move(*sel);
                          out.push_back(std::move(s));
                          return {};
                        });
  if (!ok)
    return ok.error();
  return out;
}

// The top level, defaulted as SetDefaults_LowNodeLoadArgs does, as the first pool.
Expected<NodePool> topLevelPool(const json::object& o) {
  auto top = readPoolFields(o, "");
  if (!top)
    return top.error();
  NodePool base;
  base.name = std::string(kDefaultPoolName);
  base.node_selector = top->node_selector;
  base.use_deviation_thresholds = top->use_deviation_thresholds;
  base.high_thresholds = top->high.value_or(Thresholds{});
  base.low_thresholds = top->low.value_or(Thresholds{});
  base.prod_high_thresholds = top->prod_high.value_or(Thresholds{});
  base.prod_low_thresholds = top->prod_low.value_or(Thresholds{});
  ResourceWeights defaults{{"cpu", 1}, {"memory", 1}};
  for (const auto* t : {&base.low_thresholds, &base.high_thresholds})
    for (const auto& [name, pct] : *t)
      defaults[name] = 1;
  base.resource_weights = top->weights.value_or(ResourceWeights{});
  for (const auto& [name, w] : defaults) {
    if (auto& v = base.resource_weights[name]; v <= 0)
      v = w;
  }
  base.anomaly_condition = applyCondition(top->condition, LoadAnomalyCondition{});
  if (auto ok = validatePool(base, ""); !ok)
    return ok.error();
  return base;
}

// A nodePools entry, what it leaves unset taken from `base`.
Expected<NodePool> nodePool(const json::object& item, const std::string& at, const NodePool& base) {
  auto f = readPoolFields(item, at);
  if (!f)
    return f.error();
  NodePool p;
  auto name = strict::stringField(item, "name", at);
  if (!name)
    return name.error();
  p.name = name->value_or("");
  p.node_selector = std::move(f->node_selector);
  p.use_deviation_thresholds = f->use_deviation_thresholds;
  p.high_thresholds = f->high.value_or(base.high_thresholds);
  p.low_thresholds = f->low.value_or(base.low_thresholds);
  p.prod_high_thresholds = f->prod_high.value_or(base.prod_high_thresholds);
  p.prod_low_thresholds = f->prod_low.value_or(base.prod_low_thresholds);
  p.resource_weights = f->weights.value_or(base.resource_weights);
  p.anomaly_condition = applyCondition(f->condition, base.anomaly_condition);
  if (auto ok = validatePool(p, at); !ok)
    return ok.error();
  return p;
}

// The top level as the first pool, then each of nodePools.
Expected<std::vector<NodePool>> poolsField(const json::object& o) {
  auto base = topLevelPool(o);
  if (!base)
    return base.error();
  std::vector<NodePool> pools{*base};
  auto ok = forEachItem(
      o, "nodePools",
      {"name", "nodeSelector", "useDeviationThresholds", "highThresholds", "lowThresholds",
       "prodHighThresholds", "prodLowThresholds", "resourceWeights", "anomalyCondition"},
      [&](const json::object& item, const std::string& at) -> Expected<void> {
        auto p = nodePool(item, at, *base);
        if (!p)
          return p.error();
        pools.push_back(std::move(*p));
        return {};
      });
  if (!ok)
    return ok.error();
  return pools;
}

}  // namespace

Expected<LowNodeLoadArgs> decodeLowNodeLoadArgs(const json::value* args) {
  LowNodeLoadArgs a;
  pluginkit::ArgsReader r(args, {"paused", "dryRun", "numberOfNodes", "nodeMetricExpirationSeconds",
                                 "evictableNamespaces", "nodeSelector", "podSelectors", "nodeFit",
                                 "useDeviationThresholds", "highThresholds", "lowThresholds",
                                 "prodHighThresholds", "prodLowThresholds", "resourceWeights",
                                 "anomalyCondition", "detectorCacheTimeout", "nodePools"});
  r.boolean("paused", a.paused).boolean("dryRun", a.dry_run).boolean("nodeFit", a.node_fit);
  r.decoded(a.number_of_nodes, utilization::numberOfNodesField);
  r.int64("nodeMetricExpirationSeconds", a.node_metric_expiration_seconds)
      .then([&]() -> Expected<void> {
        if (a.node_metric_expiration_seconds <= 0)
          return strict::fieldError("nodeMetricExpirationSeconds", "must be a positive value");
        return {};
      });
  r.decoded(a.evictable_namespaces,
            [](const json::object& o) {
              return utilization::namespacesField(o, "evictableNamespaces", "");
            })
      .duration("detectorCacheTimeout", a.detector_cache_timeout)
      .decoded(a.pod_selectors, podSelectorsField)
      .decoded(a.pools, poolsField);
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::lownodeload
