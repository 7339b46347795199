// Why the metric cache refused a sample: the error codes append() returns, in their own
// boost::system category so they travel as koord::Result like every other hot-path error.
#pragma once

#include <boost/system/error_code.hpp>

namespace koord::roles::koordlet::metriccache {

enum class MetricCacheErrc {
  kOutOfOrder = 1,      // older than the series' newest sample (within clock_step_reset)
  kDuplicateTimestamp,  // same millisecond as the series' newest sample
  kNonFiniteValue,      // NaN or infinite, or too large for a float
  kSeriesLimit,         // a new keyed series while max_series are held
};

const boost::system::error_category& metricCacheCategory();

inline boost::system::error_code makeError(MetricCacheErrc e) {
  return {static_cast<int>(e), metricCacheCategory()};
}

}  // namespace koord::roles::koordlet::metriccache
