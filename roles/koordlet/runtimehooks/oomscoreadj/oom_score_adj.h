// OOMScoreAdj's policy: the oom_score_adj a pod's annotations ask for one of its containers,
// per container (oom-score-adj-spec) or for the whole pod (oom-score-adj).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::koordlet {

inline constexpr std::string_view kAnnotationOOMScoreAdj = "koordinator.sh/oom-score-adj";
inline constexpr std::string_view kAnnotationOOMScoreAdjSpec = "koordinator.sh/oom-score-adj-spec";
inline constexpr std::int64_t kOOMScoreAdjMin = -1000;
inline constexpr std::int64_t kOOMScoreAdjMax = 1000;

/// The container's entry in oom-score-adj-spec (a JSON object of name -> integer), else the
/// pod's oom-score-adj (a decimal integer), else nullopt: no intervention. Koordinator's
/// order and formats; a value outside [-1000, 1000] or a malformed annotation is an error that
/// names the annotation.
kube::Expected<std::optional<std::int64_t>> containerOOMScoreAdj(
    const kube::Annotations& annotations, std::string_view container);

}  // namespace koord::roles::koordlet
