// MigrationControllerArgs: strict decoding, Koordinator's defaults (SetDefaults_MigrationController
// Args) and validation (ValidateMigrationControllerArgs), and the per-workload cap arithmetic.
#include "args.h"

#include <boost/json.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::migration {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::strict::fieldError;

namespace {

// Go's strconv.Atoi: an optional sign and decimal digits, within int32 here (IntOrString's
// range).
std::optional<std::int32_t> atoi32(std::string_view s) {
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  std::int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// An IntOrString member: a JSON integer, or a string that must be "N%" (Koordinator's
// validation scales every one against 100, which refuses anything else).
Expected<std::optional<IntOrPercent>> intOrPercentField(const json::object& o,
                                                        std::string_view name,
                                                        std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return std::optional<IntOrPercent>();
  const std::string p = jf::childPath(path, name);
  if (v->is_string()) {
    std::string_view text = v->get_string();
    if (text.empty() || text.back() != '%')
      return fieldError(
          p, fmt::format("invalid value {:?}: must be an integer or a percentage", text));
    auto n = atoi32(text.substr(0, text.size() - 1));
    if (!n)
      return fieldError(p, fmt::format("invalid value {:?}: not a percentage", text));
    return std::optional<IntOrPercent>(IntOrPercent{true, *n});
  }
  auto n = jf::int32Value(*v, p);
  if (!n)
    return fieldError(p, "must be an integer or a string percentage");
  return std::optional<IntOrPercent>(IntOrPercent{false, *n});
}

// Float64OrString: a number, or a string Go's ParseFloat reads (0 when it cannot, which the
// validation then refuses).
Expected<std::optional<double>> floatOrStringField(const json::object& o, std::string_view name,
                                                   std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return std::optional<double>();
  if (v->is_string()) {
    std::string_view text = v->get_string();
    if (!text.empty() && text.front() == '+')
      text.remove_prefix(1);
    double d = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || end != text.data() + text.size())
      d = 0;
    return std::optional<double>(d);
  }
  auto d = kube::strict::numberField(o, name, path);
  if (!d)
    return d.error();
  return *d;
}

Expected<std::vector<std::string>> strictStrings(const json::object& o, std::string_view name,
                                                 std::string_view path) {
  auto list = jf::stringList(o, name, path);
  if (!list)
    return fieldError(jf::childPath(path, name), "must be a list of strings");
  return list;
}

template <typename T>
void setIf(const std::optional<T>& v, T& out) {
  if (v)
    out = *v;
}

#define KOORD_TRY(var, expr) \
  auto var = (expr);         \
  if (!var)                  \
    return var.error();

Expected<void> decodeInto(const json::object& o, MigrationControllerArgs& a) {
  const std::string_view path;
  if (auto ok = kube::strict::rejectUnknownFields(o,
                                                  {"dryRun",
                                                   "maxConcurrentReconciles",
                                                   "evictFailedBarePods",
                                                   "evictLocalStoragePods",
                                                   "evictSystemCriticalPods",
                                                   "ignorePvcPods",
                                                   "priorityThreshold",
                                                   "labelSelector",
                                                   "namespaces",
                                                   "nodeFit",
                                                   "nodeSelector",
                                                   "maxMigratingPerNode",
                                                   "maxMigratingPerNamespace",
                                                   "maxMigratingPerWorkload",
                                                   "maxUnavailablePerWorkload",
                                                   "skipCheckExpectedReplicas",
                                                   "objectLimiters",
                                                   "defaultJobMode",
                                                   "defaultJobTTL",
                                                   "schedulerNames",
                                                   "evictQPS",
                                                   "evictBurst",
                                                   "evictionPolicy",
                                                   "defaultDeleteOptions",
                                                   "arbitrationArgs"},
                                                  path);
      !ok) {
    return ok.error();
  }
  using namespace kube::strict;
  KOORD_TRY(dry_run, boolField(o, "dryRun", path));
  setIf(*dry_run, a.dry_run);
  KOORD_TRY(reconciles, int32Field(o, "maxConcurrentReconciles", path));
  setIf(*reconciles, a.max_concurrent_reconciles);
  for (auto [name, out] :
       {std::pair<std::string_view, bool*>{"evictFailedBarePods", &a.evict_failed_bare_pods},
        {"evictLocalStoragePods", &a.evict_local_storage_pods},
        {"evictSystemCriticalPods", &a.evict_system_critical_pods},
        {"ignorePvcPods", &a.ignore_pvc_pods},
        {"nodeFit", &a.node_fit}}) {
    KOORD_TRY(b, boolField(o, name, path));
    setIf(*b, *out);
  }
  KOORD_TRY(threshold, objectField(o, "priorityThreshold", path));
  if (*threshold != nullptr) {
    if (auto ok = rejectUnknownFields(**threshold, {"value", "name"}, "priorityThreshold"); !ok)
      return ok.error();
    PriorityThreshold t;
    KOORD_TRY(value, int32Field(**threshold, "value", "priorityThreshold"));
    t.value = *value;
    KOORD_TRY(name, stringField(**threshold, "name", "priorityThreshold"));
    t.name = name->value_or("");
    a.priority_threshold = std::move(t);
  }
  if (const json::value* sel = jf::field(o, "labelSelector")) {
    if (sel->is_object()) {
      if (auto ok = rejectUnknownFields(sel->get_object(), {"matchLabels", "matchExpressions"},
                                        "labelSelector");
          !ok)
        return ok.error();
    }
    KOORD_TRY(decoded, kube::decodeLabelSelector(*sel, "labelSelector"));
    a.label_selector = std::move(*decoded);
  }
  KOORD_TRY(namespaces, objectField(o, "namespaces", path));
  if (*namespaces != nullptr) {
    if (auto ok = rejectUnknownFields(**namespaces, {"include", "exclude"}, "namespaces"); !ok)
      return ok.error();
    Namespaces n;
    KOORD_TRY(include, strictStrings(**namespaces, "include", "namespaces"));
    n.include = std::move(*include);
    KOORD_TRY(exclude, strictStrings(**namespaces, "exclude", "namespaces"));
    n.exclude = std::move(*exclude);
    a.namespaces = std::move(n);
  }
  KOORD_TRY(node_selector, stringField(o, "nodeSelector", path));
  setIf(*node_selector, a.node_selector);
  KOORD_TRY(per_node, int32Field(o, "maxMigratingPerNode", path));
  if (*per_node)
    a.max_migrating_per_node = *per_node;
  KOORD_TRY(per_ns, int32Field(o, "maxMigratingPerNamespace", path));
  a.max_migrating_per_namespace = *per_ns;
  KOORD_TRY(per_workload, intOrPercentField(o, "maxMigratingPerWorkload", path));
  a.max_migrating_per_workload = *per_workload;
  KOORD_TRY(unavailable, intOrPercentField(o, "maxUnavailablePerWorkload", path));
  a.max_unavailable_per_workload = *unavailable;
  KOORD_TRY(skip, boolField(o, "skipCheckExpectedReplicas", path));
  a.skip_check_expected_replicas = *skip;

  KOORD_TRY(limiters, objectField(o, "objectLimiters", path));
  if (*limiters != nullptr && !(*limiters)->empty()) {
    a.object_limiters.clear();
    for (const auto& [key, value] : **limiters) {
      const std::string p = jf::childPath("objectLimiters", key);
      KOORD_TRY(lo, asObject(value, p));
      if (auto ok = rejectUnknownFields(**lo, {"duration", "maxMigrating"}, p); !ok)
        return ok.error();
      ObjectLimiter limiter;
      KOORD_TRY(duration, durationField(**lo, "duration", p));
      limiter.duration = duration->value_or(std::chrono::nanoseconds(0));
      KOORD_TRY(max, intOrPercentField(**lo, "maxMigrating", p));
      limiter.max_migrating = *max;
      a.object_limiters[std::string(key)] = limiter;
    }
  }

  KOORD_TRY(mode, stringField(o, "defaultJobMode", path));
  if (*mode && !(*mode)->empty()) {
    auto parsed = apis::podMigrationJobModeByName(**mode);
    if (!parsed)
      return fieldError("defaultJobMode",
                        fmt::format("invalid value {:?}: defaultJobMode must be {} or {}", **mode,
                                    apis::toString(apis::PodMigrationJobMode::kReservationFirst),
                                    apis::toString(apis::PodMigrationJobMode::kEvictDirectly)));
    a.default_job_mode = *parsed;
  }
  KOORD_TRY(ttl, durationField(o, "defaultJobTTL", path));
  setIf(*ttl, a.default_job_ttl);
  KOORD_TRY(schedulers, strictStrings(o, "schedulerNames", path));
  if (!schedulers->empty())
    a.scheduler_names = std::move(*schedulers);
  KOORD_TRY(qps, floatOrStringField(o, "evictQPS", path));
  setIf(*qps, a.evict_qps);
  KOORD_TRY(burst, int32Field(o, "evictBurst", path));
  setIf(*burst, a.evict_burst);
  KOORD_TRY(policy, stringField(o, "evictionPolicy", path));
  if (*policy && !(*policy)->empty()) {
    const auto known = parseEvictionMethod(**policy);
    if (known)
      a.eviction_policy = *known;
    else
      return fieldError("evictionPolicy",
                        fmt::format("unsupported eviction policy {:?}: must be Eviction, Delete "
                                    "or SoftEviction",
                                    **policy));
  }
  if (const json::value* del = jf::field(o, "defaultDeleteOptions")) {
    if (del->is_object()) {
      if (auto ok =
              rejectUnknownFields(del->get_object(),
                                  {"kind", "apiVersion", "gracePeriodSeconds", "preconditions",
                                   "orphanDependents", "propagationPolicy", "dryRun"},
                                  "defaultDeleteOptions");
          !ok)
        return ok.error();
    }
    KOORD_TRY(decoded, apis::decodeDeleteOptions(*del, "defaultDeleteOptions"));
    a.default_delete_options = std::move(*decoded);
  }
  KOORD_TRY(arbitration, objectField(o, "arbitrationArgs", path));
  if (*arbitration != nullptr) {
    if (auto ok = rejectUnknownFields(**arbitration, {"enabled", "interval"}, "arbitrationArgs");
        !ok)
      return ok.error();
    // As Koordinator defaults it: given arbitrationArgs keep their enabled (false when left out).
    KOORD_TRY(enabled, boolField(**arbitration, "enabled", "arbitrationArgs"));
    a.arbitration.enabled = enabled->value_or(false);
    KOORD_TRY(interval, durationField(**arbitration, "interval", "arbitrationArgs"));
    setIf(*interval, a.arbitration.interval);
  }
  return {};
}

#undef KOORD_TRY

}  // namespace

std::int64_t scaledValue(const IntOrPercent& v, std::int64_t total, bool round_up) {
  if (!v.percent)
    return v.value;
  const std::int64_t product = static_cast<std::int64_t>(v.value) * total;
  if (!round_up)
    return static_cast<std::int64_t>(std::floor(static_cast<double>(product) / 100.0));
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(product) / 100.0));
}

std::int64_t maxPerWorkload(std::int64_t replicas, const std::optional<IntOrPercent>& cap) {
  std::int64_t max = cap ? scaledValue(*cap, replicas, false) : 0;
  if (max == 0) {
    if (replicas > 10)
      max = scaledValue(IntOrPercent{true, 10}, replicas, false);
    else if (replicas >= 4)
      max = 2;
    else
      max = 1;
  }
  return std::min(max, replicas);
}

const ObjectLimiter* MigrationControllerArgs::workloadLimiter() const {
  auto it = object_limiters.find(kObjectLimiterWorkload);
  if (it == object_limiters.end() || it->second.duration.count() <= 0)
    return nullptr;
  return &it->second;
}

MigrationControllerArgs defaultMigrationControllerArgs() {
  MigrationControllerArgs a;
  a.scheduler_names = {std::string(apis::kKoordSchedulerName)};
  a.object_limiters[std::string(kObjectLimiterWorkload)] =
      ObjectLimiter{std::chrono::minutes(5), std::nullopt};
  return a;
}

Expected<MigrationControllerArgs> decodeMigrationControllerArgs(const json::value* args) {
  MigrationControllerArgs a = defaultMigrationControllerArgs();
  if (args != nullptr && !args->is_null()) {
    if (!args->is_object())
      return fieldError("", fmt::format("must be an object, got {}", jf::kindName(*args)));
    if (auto ok = decodeInto(args->get_object(), a); !ok)
      return ok.error();
  }
  if (auto ok = validateMigrationControllerArgs(a); !ok)
    return ok.error();
  auto compiled = kube::toSelector(a.label_selector ? &*a.label_selector : nullptr);
  a.selector = a.label_selector ? std::move(*compiled) : kube::Selector::everything();
  return a;
}

Expected<void> validateMigrationControllerArgs(const MigrationControllerArgs& a) {
  if (a.max_migrating_per_namespace && *a.max_migrating_per_namespace < 0)
    return fieldError("maxMigratingPerNamespace",
                      fmt::format("invalid value {}: maxMigratingPerNamespace should be greater "
                                  "or equal 0",
                                  *a.max_migrating_per_namespace));
  if (a.max_migrating_per_node && *a.max_migrating_per_node < 0)
    return fieldError("maxMigratingPerNode",
                      fmt::format("invalid value {}: maxMigratingPerNode should be greater or "
                                  "equal 0",
                                  *a.max_migrating_per_node));
  if (!(a.evict_qps > 0) || !std::isfinite(a.evict_qps))
    return fieldError(
        "evictQPS", fmt::format("invalid value {}: evictQPS must be greater than 0", a.evict_qps));
  if (a.evict_burst <= 0)
    return fieldError("evictBurst", fmt::format("invalid value {}: evictBurst must be greater "
                                                "than 0",
                                                a.evict_burst));
  if (a.label_selector) {
    if (auto compiled = kube::toSelector(*a.label_selector); !compiled)
      return fieldError("labelSelector", compiled.error().message);
  }
  if (a.namespaces && !a.namespaces->include.empty() && !a.namespaces->exclude.empty())
    return fieldError("namespaces", "only one of Include/Exclude namespaces can be set");
  if (a.max_concurrent_reconciles < 1)
    return fieldError("maxConcurrentReconciles",
                      fmt::format("invalid value {}: maxConcurrentReconciles should be greater "
                                  "than or equal to 1",
                                  a.max_concurrent_reconciles));
  if (a.default_job_ttl.count() < 0)
    return fieldError("defaultJobTTL", "defaultJobTTL should be positive or zero");
  if (!a.node_selector.empty()) {
    if (auto parsed = kube::Selector::parse(a.node_selector); !parsed)
      return fieldError("nodeSelector", parsed.error().message);
  }
  return {};
}

}  // namespace koord::roles::descheduler::migration
