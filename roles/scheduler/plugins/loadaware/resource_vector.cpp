#include "plugins/loadaware/resource_vector.h"

#include <algorithm>

namespace koord::roles::scheduler::loadaware {

std::int64_t resourceValue(std::string_view name, const kube::Quantity& q) {
  return name == kResourceCPU ? q.milliValue() : q.value();
}

ResourceVectorizer::ResourceVectorizer(std::vector<std::string> names) : names_(std::move(names)) {
  std::sort(names_.begin(), names_.end());
  names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
}

std::size_t ResourceVectorizer::indexOf(std::string_view name) const {
  auto it = std::lower_bound(names_.begin(), names_.end(), name);
  if (it == names_.end() || *it != name)
    return names_.size();
  return static_cast<std::size_t>(it - names_.begin());
}

ResourceVector ResourceVectorizer::fromList(const kube::ResourceList& list) const {
  ResourceVector v = empty();
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (auto it = list.find(names_[i]); it != list.end())
      v[i] = resourceValue(names_[i], it->second);
  }
  return v;
}

ResourceVector ResourceVectorizer::fromFactors(const ResourceFactors& factors) const {
  ResourceVector v = empty();
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (auto it = factors.find(names_[i]); it != factors.end())
      v[i] = it->second;
  }
  return v;
}

ResourceVector ResourceVectorizer::fromResource(const Resource& r) const {
  ResourceVector v = empty();
  for (std::size_t i = 0; i < names_.size(); ++i)
    v[i] = r.get(names_[i]);
  return v;
}

bool isZero(const ResourceVector& v) {
  return std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x == 0; });
}

void addTo(ResourceVector& v, const ResourceVector& y) {
  for (std::size_t i = 0; i < v.size() && i < y.size(); ++i)
    v[i] += y[i];
}

void subtractFrom(ResourceVector& v, const ResourceVector& y) {
  for (std::size_t i = 0; i < v.size() && i < y.size(); ++i)
    v[i] -= y[i];
}

bool addPositiveDelta(ResourceVector& v, const ResourceVector& x, const ResourceVector* y) {
  bool grew = false;
  for (std::size_t i = 0; i < v.size() && i < x.size(); ++i) {
    std::int64_t d = x[i] - (y && i < y->size() ? (*y)[i] : 0);
    if (d > 0) {
      v[i] += d;
      grew = true;
    }
  }
  return grew;
}

}  // namespace koord::roles::scheduler::loadaware
