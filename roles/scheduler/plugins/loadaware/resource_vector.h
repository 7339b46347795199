// LoadAwareScheduling's resource arithmetic: a fixed, sorted list of resource names (cpu, memory
// and every name the args mention) and plain integer vectors indexed by it, cpu in millicores.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "framework/resource.h"
#include "koord/kube/quantity.h"

namespace koord::roles::scheduler::loadaware {

/// Per-resource integers as the args write them (weights, thresholds, scaling factors).
using ResourceFactors = std::map<std::string, std::int64_t, std::less<>>;

/// Indexed like the ResourceVectorizer that made it.
using ResourceVector = std::vector<std::int64_t>;

/// cpu as millicores, anything else by value(), as the NodeMetric and the estimator count.
std::int64_t resourceValue(std::string_view name, const kube::Quantity& q);

class ResourceVectorizer {
 public:
  ResourceVectorizer() = default;
  /// Sorted and de-duplicated.
  explicit ResourceVectorizer(std::vector<std::string> names);

  const std::vector<std::string>& names() const { return names_; }
  std::size_t size() const { return names_.size(); }
  /// The index of `name`; size() when it is not one of ours.
  std::size_t indexOf(std::string_view name) const;

  ResourceVector empty() const { return ResourceVector(names_.size(), 0); }
  /// Names not in the vectorizer are dropped: they cannot take part in any threshold or weight.
  ResourceVector fromList(const kube::ResourceList& list) const;
  ResourceVector fromFactors(const ResourceFactors& factors) const;
  ResourceVector fromResource(const Resource& r) const;

 private:
  std::vector<std::string> names_;
};

/// True when every entry is zero (an all-zero threshold vector disables the check).
bool isZero(const ResourceVector& v);
void addTo(ResourceVector& v, const ResourceVector& y);
void subtractFrom(ResourceVector& v, const ResourceVector& y);
/// v += max(0, x - y) per entry; `y` null counts as zero. True when any entry grew.
bool addPositiveDelta(ResourceVector& v, const ResourceVector& x, const ResourceVector* y);

}  // namespace koord::roles::scheduler::loadaware
