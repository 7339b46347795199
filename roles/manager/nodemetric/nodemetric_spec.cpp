#include "nodemetric/nodemetric_spec.h"

#include <boost/json.hpp>

#include "koord/core/duration.h"

namespace koord::roles::manager {

boost::json::value nodeMetricSpec(const apis::ColocationStrategy& s) {
  namespace json = boost::json;
  json::array durations;
  // metav1.Duration travels as Go prints durations ("5m0s"); the koordlet parses them back.
  for (auto d : s.metric_aggregate_durations)
    durations.emplace_back(formatGoDuration(d));
  return json::object{
      {"metricCollectPolicy",
       json::object{{"aggregateDurationSeconds", s.metric_aggregate_duration_seconds},
                    {"reportIntervalSeconds", s.metric_report_interval_seconds},
                    {"nodeAggregatePolicy", json::object{{"durations", std::move(durations)}}},
                    {"nodeMemoryCollectPolicy", s.metric_memory_collect_policy}}}};
}

}  // namespace koord::roles::manager
