// RemoveDuplicatesArgs as the community descheduler spells them: owner kinds to leave alone and
// which namespaces to look at, read strictly from pluginConfig.
#pragma once

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::removeduplicates {

struct RemoveDuplicatesArgs final : PluginArgs {
  std::optional<podfilter::Namespaces> namespaces;
  /// A pod with an owner of one of these kinds is never a duplicate.
  std::vector<std::string> exclude_owner_kinds;
};

/// Decodes pluginConfig args (null or absent: the defaults). Unknown members, wrong JSON types
/// and both namespace lists are errors naming the field.
Expected<RemoveDuplicatesArgs> decodeRemoveDuplicatesArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::removeduplicates
