// /validate-configmap: refuses a slo-controller-config that the SLO controllers could not parse,
// so a typo is reported to whoever applies it instead of being found later in a log.
#pragma once

#include <boost/json/object.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "koord/kube/labels.h"
#include "webhook/admission_review.h"

namespace koord::manager::webhook {

struct ConfigMapValidatingOptions {
  /// --config-namespace and --slo-config-name: the only ConfigMap this webhook judges.
  std::string namespace_name = "koordinator-system";
  std::string name = "slo-controller-config";
  /// Every node's name and labels, for Koordinator's check that no node is selected by two
  /// nodeConfigs/nodeStrategies of one key. Empty: the check is skipped.
  std::function<std::vector<std::pair<std::string, kube::Labels>>()> nodes;
};

/// nullopt when `config` may be stored; otherwise why not. On UPDATE (`old_config` given) only
/// keys whose text changed are parsed, on CREATE every non-empty key, as Koordinator's checkers
/// do: a key that was already broken does not block an unrelated change.
std::optional<std::string> validateSloConfigMap(const boost::json::object& config,
                                                const boost::json::object* old_config,
                                                const ConfigMapValidatingOptions& options);

/// The /validate-configmap handler: other ConfigMaps and DELETE are allowed untouched; a
/// refused config is answered with code 400 and the parser's message.
Handler configMapValidatingHandler(ConfigMapValidatingOptions options = {});

}  // namespace koord::manager::webhook
