// The gang a pod is in, and a gang's settings read from a pod's annotations or a PodGroup's,
// with Koordinator's fallbacks for every value it tolerates.
#include "koord/apis/gang.h"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "enum_names.h"
#include "koord/apis/input_limits.h"
#include "koord/core/duration.h"
#include "object_fields.h"

namespace koord::apis {

using kube::Expected;
using kube::makeKubeError;

namespace {

using detail::EnumName;

constexpr EnumName<GangMode> kModes[] = {
    {GangMode::kStrict, kGangModeStrict},
    {GangMode::kNonStrict, kGangModeNonStrict},
};
constexpr EnumName<GangMatchPolicy> kPolicies[] = {
    {GangMatchPolicy::kOnceSatisfied, kGangMatchPolicyOnceSatisfied},
    {GangMatchPolicy::kOnlyWaiting, kGangMatchPolicyOnlyWaiting},
    {GangMatchPolicy::kWaitingAndRunning, kGangMatchPolicyWaitingAndRunning},
};

// A value quoted in a message: whoever wrote a megabyte into an annotation does not get it
// copied into every log line.
std::string quoted(std::string_view value) {
  constexpr std::size_t kShown = 64;
  if (value.size() <= kShown)
    return fmt::format("\"{}\"", value);
  return fmt::format("\"{}...\" ({} bytes)", value.substr(0, kShown), value.size());
}

// strconv.ParseInt(s, 10, 32): an optional sign and decimal digits, within int32.
std::optional<std::int32_t> parseGoInt32(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty())
    return std::nullopt;
  std::int64_t magnitude = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    magnitude = magnitude * 10 + (c - '0');
    if (magnitude > std::int64_t{1} << 31)
      return std::nullopt;
  }
  const std::int64_t value = negative ? -magnitude : magnitude;
  if (value > std::numeric_limits<std::int32_t>::max())
    return std::nullopt;
  return static_cast<std::int32_t>(value);
}

const std::string* valueOf(const kube::Labels& map, std::string_view key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

// A value read and the key it came from, for the messages that name it.
struct Named {
  std::string_view key;
  const std::string* value = nullptr;
};

// What tryInitByPodConfig and tryInitByPodGroup read alike from annotations.
class SpecReader {
 public:
  SpecReader(const kube::Labels& annotations, GangSpec& out)
      : annotations_(annotations), out_(out) {}

  void totalNumber() {
    out_.total_number = out_.min_available;
    const std::string* text = valueOf(annotations_, kAnnotationGangTotalNumber);
    if (text == nullptr)
      return;
    auto total = parseGoInt32(*text);
    if (!total) {
      ignore(kAnnotationGangTotalNumber, fmt::format("not an int32: {}, using min-available {}",
                                                     quoted(*text), out_.min_available));
      return;
    }
    if (*total != 0 && *total < out_.min_available) {
      ignore(kAnnotationGangTotalNumber,
             fmt::format("{} is less than min-available {}, using {}", *total, out_.min_available,
                         out_.min_available));
      return;
    }
    out_.total_number = *total;
  }

  void mode() {
    const std::string* text = valueOf(annotations_, kAnnotationGangMode);
    if (text == nullptr)
      return;
    if (auto mode = detail::valueOf(kModes, *text)) {
      out_.mode = *mode;
      return;
    }
    ignore(kAnnotationGangMode,
           fmt::format("unsupported value {}, using {}", quoted(*text), kGangModeStrict));
  }

  void matchPolicy(Named policy) {
    if (policy.value == nullptr)
      return;
    if (auto value = detail::valueOf(kPolicies, *policy.value)) {
      out_.match_policy = *value;
      return;
    }
    ignore(policy.key, fmt::format("unsupported value {}, using {}", quoted(*policy.value),
                                   kGangMatchPolicyOnceSatisfied));
  }

  Expected<void> groups() {
    auto parsed =
        detail::parseAnnotationJson(annotations_, kAnnotationGangGroups, kMaxAnnotationValueBytes);
    if (!parsed)
      return parsed.error();
    std::vector<std::string> groups;
    if (*parsed) {
      const std::string& text = annotations_.find(kAnnotationGangGroups)->second;
      if ((*parsed)->syntax_error) {
        ignore(kAnnotationGangGroups,
               fmt::format("not JSON: {}, using the gang alone", quoted(text)));
      } else {
        auto items = detail::goStringSlice((*parsed)->value, kAnnotationGangGroups, kMaxGangGroups,
                                           kMaxGangIdBytes);
        if (!items)
          return items.error();
        if (!items->assigned) {
          ignore(kAnnotationGangGroups,
                 fmt::format("not a JSON array: {}, using the gang alone", quoted(text)));
        } else if (items->type_error) {
          ignore(kAnnotationGangGroups,
                 fmt::format("items that are not strings read as \"\": {}", quoted(text)));
        }
        groups = std::move(items->items);
      }
    }
    if (groups.empty())
      groups.push_back(out_.id);
    std::sort(groups.begin(), groups.end());
    out_.group_id.clear();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (i > 0)
        out_.group_id += ',';
      out_.group_id += groups[i];
    }
    out_.groups = std::move(groups);
    return {};
  }

  void ignore(std::string_view key, std::string why) {
    out_.ignored.push_back(fmt::format("{}: {}", key, why));
  }

 private:
  const kube::Labels& annotations_;
  GangSpec& out_;
};

}  // namespace

Expected<std::optional<PodGang>> podGang(std::string_view pod_namespace, const kube::Labels& labels,
                                         const kube::Labels& annotations) {
  struct Source {
    const kube::Labels* map;
    std::string_view key;
    GangSource source;
  };
  const std::array<Source, 3> sources{{
      {&labels, kLabelPodGroup, GangSource::kPodGroup},
      {&labels, kLabelLightweightPodGroupName, GangSource::kPodAnnotations},
      {&annotations, kAnnotationGangName, GangSource::kPodAnnotations},
  }};
  for (const Source& s : sources) {
    const std::string* name = valueOf(*s.map, s.key);
    if (name == nullptr || name->empty())
      continue;
    if (auto size = checkValueSize(s.key, *name, kMaxGangNameBytes); !size)
      return size.error();
    return std::optional<PodGang>(PodGang{std::string(pod_namespace), *name, s.source});
  }
  return std::optional<PodGang>();
}

Expected<std::optional<std::string>> podGangId(std::string_view pod_namespace,
                                               const kube::Labels& labels,
                                               const kube::Labels& annotations) {
  auto gang = podGang(pod_namespace, labels, annotations);
  if (!gang)
    return gang.error();
  if (!*gang)
    return std::optional<std::string>();
  return std::optional<std::string>((*gang)->id());
}

Expected<GangSpec> gangSpecFromPod(std::string_view pod_namespace, const kube::Labels& labels,
                                   const kube::Labels& annotations,
                                   std::chrono::nanoseconds default_wait) {
  auto gang = podGang(pod_namespace, labels, annotations);
  if (!gang)
    return gang.error();
  if (!*gang) {
    return makeKubeError(fmt::format("{}: the pod is in no gang (no {} or {} label, no {})",
                                     kAnnotationGangName, kLabelPodGroup,
                                     kLabelLightweightPodGroupName, kAnnotationGangName));
  }
  if ((*gang)->source == GangSource::kPodGroup) {
    return makeKubeError(
        fmt::format("{}: the pod's gang is PodGroup {}, whose settings are the "
                    "PodGroup's",
                    kLabelPodGroup, (*gang)->id()));
  }
  GangSpec out;
  out.id = (*gang)->id();
  out.source = GangSource::kPodAnnotations;

  // The lightweight label wins when set; an annotation that is present but empty is still read
  // (and refused), as Koordinator reads it.
  Named min_text{kLabelLightweightPodGroupMinAvailable,
                 valueOf(labels, kLabelLightweightPodGroupMinAvailable)};
  if (min_text.value == nullptr || min_text.value->empty()) {
    min_text =
        Named{kAnnotationGangMinAvailable, valueOf(annotations, kAnnotationGangMinAvailable)};
  }
  if (min_text.value == nullptr) {
    return makeKubeError(
        fmt::format("{}: missing: a gang's pods must say how many of them make "
                    "the gang (or label {})",
                    kAnnotationGangMinAvailable, kLabelLightweightPodGroupMinAvailable));
  }
  auto min_available = parseGoInt32(*min_text.value);
  if (!min_available) {
    return makeKubeError(
        fmt::format("{}: not an int32: {}", min_text.key, quoted(*min_text.value)));
  }
  out.min_available = *min_available;

  SpecReader read(annotations, out);
  read.totalNumber();
  read.mode();

  Named policy{kAnnotationGangMatchPolicy, valueOf(annotations, kAnnotationGangMatchPolicy)};
  if (policy.value == nullptr || policy.value->empty()) {
    const std::string* alias = valueOf(annotations, kAnnotationAliasGangMatchPolicy);
    if (alias != nullptr && !alias->empty())
      policy = Named{kAnnotationAliasGangMatchPolicy, alias};
  }
  read.matchPolicy(policy);

  out.wait_time = default_wait;
  if (const std::string* text = valueOf(annotations, kAnnotationGangWaitingTime)) {
    auto wait = parseGoDuration(*text);
    if (wait && wait->count() > 0) {
      out.wait_time = *wait;
    } else {
      read.ignore(kAnnotationGangWaitingTime,
                  fmt::format("not a positive duration: {}, using {}", quoted(*text),
                              formatGoDuration(default_wait)));
    }
  }

  if (auto ok = read.groups(); !ok)
    return ok.error();
  return out;
}

Expected<GangSpec> gangSpecFromPodGroup(const PodGroup& group,
                                        std::chrono::nanoseconds default_wait) {
  GangSpec out;
  out.id = group.id();
  out.source = GangSource::kPodGroup;
  out.min_available = group.min_member;

  SpecReader read(group.annotations, out);
  read.totalNumber();
  read.mode();
  read.matchPolicy(
      {kAnnotationGangMatchPolicy, valueOf(group.annotations, kAnnotationGangMatchPolicy)});
  out.wait_time = group.waitTime(default_wait);
  if (group.schedule_timeout_seconds && *group.schedule_timeout_seconds < 0) {
    read.ignore("spec.scheduleTimeoutSeconds",
                fmt::format("negative ({}), using {}", *group.schedule_timeout_seconds,
                            formatGoDuration(default_wait)));
  }
  if (auto ok = read.groups(); !ok)
    return ok.error();
  return out;
}

std::string_view toString(GangMode mode) {
  return detail::nameOf(kModes, mode);
}

std::string_view toString(GangMatchPolicy policy) {
  return detail::nameOf(kPolicies, policy);
}

}  // namespace koord::apis
