// The namespaces {include, exclude} and labelSelector args the community descheduler's plugins
// share, read strictly from pluginConfig, and the pod filter they make together.
#pragma once

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/types.h"
#include "koord/core/expected.h"
#include "koord/kube/labels.h"

namespace koord::roles::descheduler::podfilter {

/// api.Namespaces: at most one of the two lists may be non-empty (upstream's validation).
struct Namespaces {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
};

/// The members most plugins' args carry under these names.
struct CommonArgs {
  std::optional<Namespaces> namespaces;
  /// Absent (nil): every pod matches, as upstream's WithLabelSelector(nil).
  std::optional<kube::LabelSelector> label_selector;
};

/// Reads `o`'s "namespaces" member (absent or null: nullopt). `path` is the path of `o` ("" at
/// the args' root); errors name path.namespaces, an unknown member and both lists set included.
Expected<std::optional<Namespaces>> decodeNamespaces(const boost::json::object& o,
                                                     std::string_view path = {});

/// Reads `o`'s "labelSelector" member, or the selector named `name` (absent or null: nullopt),
/// strictly, and compiles it so that a bad key or value is reported while the configuration is
/// read.
Expected<std::optional<kube::LabelSelector>> decodeLabelSelector(
    const boost::json::object& o, std::string_view path = {},
    std::string_view name = "labelSelector");

/// decodeNamespaces and decodeLabelSelector together. The caller still rejects unknown members
/// of `o` (it knows its other fields).
Expected<CommonArgs> decodeCommonArgs(const boost::json::object& o, std::string_view path = {});

/// Namespace and label checks on pods, as upstream's podutil.Options builds them (its
/// WithNamespaces, WithoutNamespaces and WithLabelSelector); the evictor's filter is separate
/// (FrameworkHandle::filter).
class PodFilter {
 public:
  /// Lets every pod through.
  PodFilter() = default;
  /// Errors when the selector does not compile or both namespace lists are set.
  static Expected<PodFilter> make(const std::optional<Namespaces>& namespaces,
                                  const std::optional<kube::LabelSelector>& label_selector);
  static Expected<PodFilter> make(const CommonArgs& args) {
    return make(args.namespaces, args.label_selector);
  }

  bool matches(const Pod& pod) const;
  bool namespaceMatches(std::string_view ns) const;

 private:
  std::vector<std::string> include_;
  std::vector<std::string> exclude_;
  std::optional<kube::Selector> selector_;
};

}  // namespace koord::roles::descheduler::podfilter
