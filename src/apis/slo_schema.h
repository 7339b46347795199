// The shapes of slo-controller-config's strategies (Koordinator's Go structs, their JSON names
// and validate-tag ranges) as data, and the two things done with them: normalise and merge.
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/json_fields.h"

namespace koord::apis::detail {

struct Schema;

// One schema per Go struct that a key's strategy is.
extern const Schema kColocationStrategySchema;
extern const Schema kResourceThresholdStrategySchema;
extern const Schema kResourceQOSStrategySchema;
extern const Schema kCPUBurstStrategySchema;
extern const Schema kSystemStrategySchema;

/// Checks `in` against `schema` and returns what Go's json.Marshal(json.Unmarshal(in)) gives:
/// known fields only under their canonical names (matched exactly, else case-insensitively),
/// null and omitempty zero values dropped, durations and quantities in canonical form. Errors
/// name the field as `path`.field ("nodeConfigs[1].cpuReclaimThresholdPercent: must be >= 0");
/// `path` is "" at the top of a key.
kube::Expected<boost::json::object> normalize(const Schema& schema, const boost::json::object& in,
                                              std::string_view path);

/// Koordinator's MergeCfg (marshal `patch` and unmarshal it over `base`): struct fields merge
/// field by field, maps merge key by key with each value replaced, everything else is replaced.
/// Both sides are normalised objects of `schema`.
void merge(boost::json::object& base, const boost::json::object& patch, const Schema& schema);

using kube::jsonfields::typeError;

/// Go's strings.EqualFold for the ASCII names JSON fields have.
bool equalFold(std::string_view a, std::string_view b);

using kube::jsonfields::childPath;

}  // namespace koord::apis::detail
