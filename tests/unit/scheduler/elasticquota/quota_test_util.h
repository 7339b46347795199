// Builders for the ElasticQuota core's tests: quotas from their JSON (through the project's
// projection, as the informer would hand them over) and pods as the accounting sees them.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "koord/apis/elastic_quota.h"
#include "plugins/elasticquota/quota_info.h"

namespace elasticquota_test {

namespace eq = koord::roles::scheduler::elasticquota;

constexpr std::int64_t cores(std::int64_t n) {
  return n * 1000;
}

struct QuotaText {
  std::string_view name;
  std::string_view parent = "";
  std::int64_t min_cores = 0;
  std::int64_t max_cores = 0;
  /// 0: no shared-weight annotation (max is the weight).
  std::int64_t weight_cores = 0;
  bool allow_lent = true;
  std::string_view namespace_ = "ns";
  std::string_view namespaces_annotation = "";
};

inline koord::apis::ElasticQuota quota(const QuotaText& q) {
  std::string labels;
  if (!q.parent.empty())
    labels += fmt::format(R"("quota.scheduling.koordinator.sh/parent":"{}")", q.parent);
  if (!q.allow_lent) {
    if (!labels.empty())
      labels += ',';
    labels += R"("quota.scheduling.koordinator.sh/allow-lent-resource":"false")";
  }
  std::string annotations;
  if (q.weight_cores != 0) {
    annotations += fmt::format(
        R"("quota.scheduling.koordinator.sh/shared-weight":"{{\"cpu\":\"{}\"}}")", q.weight_cores);
  }
  if (!q.namespaces_annotation.empty()) {
    if (!annotations.empty())
      annotations += ',';
    annotations += fmt::format(R"("quota.scheduling.koordinator.sh/namespaces":"{}")",
                               q.namespaces_annotation);
  }
  const std::string text = fmt::format(
      R"({{"apiVersion":"scheduling.sigs.k8s.io/v1alpha1","kind":"ElasticQuota",)"
      R"("metadata":{{"name":"{}","namespace":"{}","labels":{{{}}},"annotations":{{{}}}}},)"
      R"("spec":{{"min":{{"cpu":"{}"}},"max":{{"cpu":"{}"}}}}}})",
      q.name, q.namespace_, labels, annotations, q.min_cores, q.max_cores);
  return koord::apis::decodeElasticQuota(boost::json::parse(text)).value();
}

inline eq::QuotaPod pod(std::string_view name, std::int64_t milli_cpu, bool assigned,
                        std::int32_t priority = 0) {
  eq::QuotaPod p;
  p.namespace_ = "ns";
  p.name = std::string(name);
  p.uid = fmt::format("uid-{}", name);
  p.request = {{"cpu", milli_cpu}};
  p.priority = priority;
  p.assigned = assigned;
  return p;
}

}  // namespace elasticquota_test
