// How the descheduler removes a pod (Koordinator's evictionPolicy and the koordinator.sh/
// evict-policy label): the names on the wire and in config files, both ways.
#pragma once

#include <optional>
#include <string_view>

namespace koord::roles::descheduler {

/// The Eviction subresource, which honours PodDisruptionBudgets; a plain Delete; or
/// SoftEviction, which only marks the pod with the scheduling.koordinator.sh/soft-eviction
/// annotation for its own controller to act on.
enum class EvictionMethod { kEviction, kDelete, kSoftEviction };

/// "Eviction", "Delete", "SoftEviction".
std::string_view toString(EvictionMethod method);
/// The method of that exact name; nullopt for any other string.
std::optional<EvictionMethod> parseEvictionMethod(std::string_view name);

}  // namespace koord::roles::descheduler
