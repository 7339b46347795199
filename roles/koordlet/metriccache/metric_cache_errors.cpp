#include "metriccache/metric_cache_errors.h"

#include <string>

namespace koord::roles::koordlet::metriccache {
namespace {

class MetricCacheCategory : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "koord.metriccache"; }
  std::string message(int ev) const override {
    switch (static_cast<MetricCacheErrc>(ev)) {
      case MetricCacheErrc::kOutOfOrder:
        return "sample older than the series' newest sample";
      case MetricCacheErrc::kDuplicateTimestamp:
        return "sample at the same time as the series' newest sample";
      case MetricCacheErrc::kNonFiniteValue:
        return "sample value is not a finite float";
      case MetricCacheErrc::kSeriesLimit:
        return "metric cache series limit reached";
    }
    return "unknown metric cache error";
  }
};

}  // namespace

const boost::system::error_category& metricCacheCategory() {
  static const MetricCacheCategory category;
  return category;
}

}  // namespace koord::roles::koordlet::metriccache
