#include "runtimehooks/oomscoreadj/oom_score_adj.h"

#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <charconv>

#include "koord/apis/input_limits.h"

namespace koord::roles::koordlet {

namespace {

kube::Expected<std::optional<std::int64_t>> inRange(std::int64_t v, std::string_view where) {
  if (v < kOOMScoreAdjMin || v > kOOMScoreAdjMax)
    return kube::makeKubeError(
        fmt::format("{}: {} is outside [{}, {}]", where, v, kOOMScoreAdjMin, kOOMScoreAdjMax));
  return std::optional<std::int64_t>(v);
}

}  // namespace

kube::Expected<std::optional<std::int64_t>> containerOOMScoreAdj(
    const kube::Annotations& annotations, std::string_view container) {
  if (auto spec = annotations.find(kAnnotationOOMScoreAdjSpec);
      spec != annotations.end() && !spec->second.empty()) {
    if (auto size = apis::checkValueSize(kAnnotationOOMScoreAdjSpec, spec->second,
                                         apis::kMaxAnnotationValueBytes);
        !size)
      return size.error();
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(spec->second, ec);
    if (ec)
      return kube::makeKubeError(
          fmt::format("{}: not JSON: {}", kAnnotationOOMScoreAdjSpec, ec.message()));
    if (!v.is_null() && !v.is_object())
      return kube::makeKubeError(
          fmt::format("{}: expected an object of container names", kAnnotationOOMScoreAdjSpec));
    if (v.is_object()) {
      // Every entry is checked, as Go's Unmarshal into map[string]int64 would.
      std::optional<std::int64_t> mine;
      for (const auto& kv : v.get_object()) {
        const std::string where =
            fmt::format("{}.{}", kAnnotationOOMScoreAdjSpec, std::string_view(kv.key()));
        std::int64_t n = 0;
        if (kv.value().is_int64())
          n = kv.value().get_int64();
        else if (kv.value().is_uint64() && kv.value().get_uint64() <= INT64_MAX)
          n = static_cast<std::int64_t>(kv.value().get_uint64());
        else
          return kube::makeKubeError(fmt::format("{}: expected an integer", where));
        auto checked = inRange(n, where);
        if (!checked)
          return checked;
        if (kv.key() == container)
          mine = n;
      }
      if (mine)
        return mine;
    }
  }
  auto pod = annotations.find(kAnnotationOOMScoreAdj);
  if (pod == annotations.end() || pod->second.empty())
    return std::optional<std::int64_t>();
  const std::string& text = pod->second;
  if (auto size =
          apis::checkValueSize(kAnnotationOOMScoreAdj, text, apis::kMaxSmallAnnotationValueBytes);
      !size)
    return size.error();
  std::int64_t n = 0;
  const char* end = text.data() + text.size();
  const char* first = text.data() + (text.front() == '+' ? 1 : 0);
  auto [ptr, err] = std::from_chars(first, end, n);
  const bool two_signs = first != text.data() && first != end && *first == '-';
  if (err != std::errc() || ptr != end || first == end || two_signs)
    return kube::makeKubeError(
        fmt::format("{}: {:?} is not an integer", kAnnotationOOMScoreAdj, text));
  return inRange(n, kAnnotationOOMScoreAdj);
}

}  // namespace koord::roles::koordlet
