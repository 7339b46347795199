// decodeElasticQuotaProfile (the ElasticQuotaProfile JSON -> ElasticQuotaProfile projection), and
// the resource ratio and resource keys as Koordinator's profile controller reads them.
#include "koord/apis/elastic_quota_profile.h"

#include <boost/json.hpp>

#include <cctype>
#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "crd_object.h"
#include "koord/apis/elastic_quota.h"
#include "koord/apis/input_limits.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

// A resource name is a qualified name: a prefix of up to 253 characters, "/", 63 more.
constexpr std::size_t kMaxResourceNameBytes = 253 + 1 + 63;

Expected<void> decodeSpec(const json::object& spec, ElasticQuotaProfile& out) {
  constexpr std::string_view kPath = "spec";
  auto quota_name = stringField(spec, "quotaName", kPath);
  if (!quota_name)
    return quota_name.error();
  out.quota_name = std::move(*quota_name);

  if (const json::value* labels = field(spec, "quotaLabels")) {
    const std::string labels_path = childPath(kPath, "quotaLabels");
    if (labels->is_object() && labels->get_object().size() > kMaxElasticQuotaProfileListItems) {
      return makeKubeError(fmt::format("{}: {} labels, more than the {} allowed", labels_path,
                                       labels->get_object().size(),
                                       kMaxElasticQuotaProfileListItems));
    }
    auto decoded = kube::decodeStringMap(*labels, labels_path);
    if (!decoded)
      return decoded.error();
    out.quota_labels = std::move(*decoded);
  }

  if (const json::value* ratio = field(spec, "resourceRatio")) {
    if (!ratio->is_string())
      return typeError(childPath(kPath, "resourceRatio"), "string", *ratio);
    out.resource_ratio = std::string(ratio->get_string());
  }

  if (const json::value* selector = field(spec, "nodeSelector")) {
    const std::string selector_path = childPath(kPath, "nodeSelector");
    auto decoded = kube::decodeLabelSelector(*selector, selector_path);
    if (!decoded)
      return decoded.error();
    // Compiled once here: Koordinator's controller fails every reconcile of a profile whose
    // selector does not compile, so such a profile does nothing either way.
    auto compiled = kube::toSelector(*decoded);
    if (!compiled)
      return makeKubeError(fmt::format("{}: {}", selector_path, compiled.error().message));
    out.node_selector = std::move(*decoded);
    out.node_selector_compiled = std::move(*compiled);
  }
  return {};
}

// status is an empty object in Koordinator's type: nothing to read.
Expected<void> decodeStatus(const json::object&, ElasticQuotaProfile&) {
  return {};
}

std::vector<std::string> resourceKeys(const kube::Labels& annotations) {
  std::vector<std::string> defaults{"cpu", "memory"};
  auto parsed =
      detail::parseAnnotationJson(annotations, kAnnotationResourceKeys, kMaxAnnotationValueBytes);
  if (!parsed || !*parsed || (*parsed)->syntax_error)
    return defaults;
  auto items = detail::goStringSlice((*parsed)->value, kAnnotationResourceKeys,
                                     kMaxElasticQuotaProfileListItems, kMaxResourceNameBytes);
  if (!items || !items->assigned)
    return defaults;
  return std::move(items->items);
}

// strconv.ParseFloat(s, 64) for the values that matter here: the finite ones, decimal or
// hexadecimal (which needs its p exponent). Infinities and NaN fail the (0, 1] range anyway.
std::optional<double> parseGoFloat(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  auto format = std::chars_format::general;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    if (s.find_first_of("pP") == std::string_view::npos)
      return std::nullopt;
    format = std::chars_format::hex;
  }
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.' ||
                     std::isxdigit(static_cast<unsigned char>(s[0])))) {
    return std::nullopt;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, format);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return negative ? -value : value;
}

}  // namespace

double ElasticQuotaProfile::resourceRatio() const {
  if (!resource_ratio)
    return 1.0;
  auto value = parseGoFloat(*resource_ratio);
  if (value && *value > 0 && *value <= 1.0)
    return *value;
  return 1.0;
}

std::string ElasticQuotaProfile::treeId() const {
  auto it = labels.find(kLabelQuotaTreeID);
  return it == labels.end() ? std::string() : it->second;
}

Expected<ElasticQuotaProfile> decodeElasticQuotaProfile(const json::value& v) {
  auto profile =
      detail::decodeCrd<ElasticQuotaProfile>(v, "ElasticQuotaProfile", decodeSpec, decodeStatus);
  if (!profile)
    return profile.error();
  profile->resource_keys = resourceKeys(profile->annotations);
  return profile;
}

}  // namespace koord::apis
