// Size bounds on the text koord parses out of annotations, labels and ConfigMaps. Whoever may
// write a pod or a node may write these, the parsers' work and memory grow with their length,
// and what reaches the koordlet's runtime hooks was never checked by the API server's own limits.
#pragma once

#include <cstddef>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::apis {

/// The API server refuses an object whose annotations, keys and values together, exceed this
/// (TotalAnnotationSizeLimitB), so no single value is longer.
inline constexpr std::size_t kMaxAnnotationValueBytes = 256 * 1024;
/// For annotations that hold one number or a short word: far more than any valid value.
inline constexpr std::size_t kMaxSmallAnnotationValueBytes = 1024;
/// A label value is a DNS label at most: 63 characters.
inline constexpr std::size_t kMaxLabelValueBytes = 63;
/// A ConfigMap holds at most 1 MiB of data (MaxSecretSize, which the API server applies to
/// ConfigMaps too), so no single key is longer.
inline constexpr std::size_t kMaxConfigMapValueBytes = 1024 * 1024;

/// A Reservation's spec.owners: the scheduler walks them for every pending pod and every
/// reservation, and real reservations name a handful.
inline constexpr std::size_t kMaxReservationOwners = 256;
/// The other lists of a Reservation (spec.taints, status.conditions, status.currentOwners) and
/// of the reservation-affinity annotation (tolerations, reservationSelectorTerms): currentOwners,
/// the longest, holds at most the pods of one node.
inline constexpr std::size_t kMaxReservationListItems = 4096;

/// An error naming `what` (the annotation, label or ConfigMap key) when `value` is longer than
/// `limit` bytes.
kube::Expected<void> checkValueSize(std::string_view what, std::string_view value,
                                    std::size_t limit);

}  // namespace koord::apis
