#include "plugins/upstream/defaultpreemption/args.h"

#include <boost/json.hpp>

#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

namespace {

namespace json = boost::json;

constexpr std::string_view kPercentage = "minCandidateNodesPercentage";
constexpr std::string_view kAbsolute = "minCandidateNodesAbsolute";

// The fields are int32 in every apiVersion; Go's decoder refuses what does not fit.
kube::Expected<void> readInt32(const json::object& o, std::string_view name, std::int32_t& out) {
  const json::value* v = kube::jsonfields::field(o, name);
  if (v == nullptr)
    return {};
  auto n = intValue(*v, name);
  if (!n)
    return n.error();
  if (*n < std::numeric_limits<std::int32_t>::min() ||
      *n > std::numeric_limits<std::int32_t>::max())
    return kube::makeKubeError(fmt::format("{}: {} overflows int32", name, *n));
  out = static_cast<std::int32_t>(*n);
  return {};
}

}  // namespace

kube::Expected<std::shared_ptr<const DefaultPreemptionArgs>> decodeDefaultPreemptionArgs(
    const json::value* args) {
  auto out = std::make_shared<DefaultPreemptionArgs>();
  auto o = argsObject(args);
  if (!o)
    return o.error();
  if (*o != nullptr) {
    if (auto known = checkKnownFields(**o, {kPercentage, kAbsolute}, ""); !known)
      return known.error();
    if (auto r = readInt32(**o, kPercentage, out->min_candidate_nodes_percentage); !r)
      return r.error();
    if (auto r = readInt32(**o, kAbsolute, out->min_candidate_nodes_absolute); !r)
      return r.error();
  }
  const std::int32_t pct = out->min_candidate_nodes_percentage;
  const std::int32_t abs = out->min_candidate_nodes_absolute;
  if (pct < 0 || pct > 100)
    return kube::makeKubeError(
        fmt::format("{}: Invalid value: {}: not in valid range [0, 100]", kPercentage, pct));
  if (abs < 0)
    return kube::makeKubeError(
        fmt::format("{}: Invalid value: {}: not in valid range [0, inf)", kAbsolute, abs));
  if (pct == 0 && abs == 0)
    return kube::makeKubeError(fmt::format("{}: Invalid value: 0: both {} and {} cannot be zero",
                                           kPercentage, kPercentage, kAbsolute));
  return std::shared_ptr<const DefaultPreemptionArgs>(std::move(out));
}

}  // namespace koord::roles::scheduler::upstream
