// Koordinator's ElasticQuota tree as its quota webhooks see it: every quota by name with its
// parent, min, max and tree id, so a create, update or delete is judged against the whole tree.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/elastic_quota.h"
#include "koord/kube/error.h"
#include "koord/kube/quantity.h"

namespace koord::manager::webhook {

struct QuotaTopologyOptions {
  /// ElasticQuotaGuaranteeUsage: a quota's min must also fit what its ancestors can guarantee.
  bool guarantee_usage = false;
  /// SupportParentQuotaSubmitPod: pods may be charged to a parent quota.
  bool parent_quota_submit_pod = false;
  /// DisableDefaultQuota: a pod without the quota-name label is not matched to a quota by its
  /// namespace.
  bool disable_default_quota = false;
  /// Whether some pod carries the quota-name label `quota`; null reads as none.
  std::function<bool(std::string_view quota)> has_labelled_pods;
  /// Whether namespace `ns` holds any pod; null reads as none.
  std::function<bool(std::string_view ns)> has_pods_in_namespace;
};

/// One quota as the tree keeps it.
struct QuotaNode {
  std::string namespace_;
  std::string name;
  std::string parent;
  bool is_parent = false;
  bool is_tree_root = false;
  bool allow_force_update = false;
  std::string tree_id;
  kube::ResourceList min;
  kube::ResourceList max;
  kube::ResourceList guaranteed;
  std::vector<std::string> namespaces;
  /// Seen by the informer, not only admitted by the webhook: an admitted create that the API
  /// server then refused must not block the next try.
  bool observed = false;
};

/// Thread-safe. The informer's events replace what they name; the validate* calls judge a change
/// and, when `commit` is set and it is allowed, apply it at once, so two changes admitted before
/// the informer hears of the first are still judged against each other.
class QuotaTopology {
 public:
  explicit QuotaTopology(QuotaTopologyOptions options = {});

  void onAdd(const apis::ElasticQuota& quota);
  void onUpdate(const apis::ElasticQuota& old_quota, const apis::ElasticQuota& quota);
  void onDelete(const apis::ElasticQuota& quota);

  /// Empty when allowed, else why not.
  kube::Expected<void> validateAdd(const apis::ElasticQuota& quota, bool commit);
  kube::Expected<void> validateUpdate(const apis::ElasticQuota& old_quota,
                                      const apis::ElasticQuota& quota, bool commit);
  kube::Expected<void> validateDelete(const apis::ElasticQuota& quota, bool commit);

  /// The tree id a new quota under `parent` inherits: nullopt when `parent` is not in the tree,
  /// "" when it has none.
  std::optional<std::string> parentTreeId(std::string_view parent) const;

  /// The quota a pod is charged to, as Koordinator's pod webhook finds it: its quota-name label,
  /// else (unless disable_default_quota) the quota named after its namespace in that namespace,
  /// else one whose namespaces annotation lists it; the default quota when that is not in the
  /// tree.
  std::string podQuota(const kube::Labels& pod_labels, std::string_view pod_namespace) const;
  /// The pod check on CREATE: a pod may not be charged to a parent quota (unless
  /// parent_quota_submit_pod).
  kube::Expected<void> validatePod(const kube::Labels& pod_labels,
                                   std::string_view pod_namespace) const;

  std::size_t size() const;
  std::optional<QuotaNode> node(std::string_view name) const;

 private:
  using Lock = std::lock_guard<std::mutex>;

  void putLocked(QuotaNode node);
  void eraseLocked(const std::string& name);
  kube::Expected<void> checkTopologyLocked(const QuotaNode* old_node, const QuotaNode& node) const;
  kube::Expected<void> checkIsParentChangeLocked(const QuotaNode& old_node,
                                                 const QuotaNode& node) const;
  kube::Expected<void> checkTreeIdLocked(const QuotaNode* old_node, const QuotaNode& node) const;
  kube::Expected<void> checkNoCycleLocked(const QuotaNode& node) const;
  kube::Expected<void> checkMaxKeysLocked(const QuotaNode& node) const;
  kube::Expected<void> checkMinSumLocked(const QuotaNode& node) const;
  kube::Expected<void> checkGuaranteedLocked(const QuotaNode& node) const;
  kube::ResourceList childMinSumLocked(const std::string& parent, std::string_view skip) const;

  QuotaTopologyOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, QuotaNode, std::less<>> nodes_;
  std::map<std::string, std::set<std::string>, std::less<>> children_;
  std::map<std::string, std::string, std::less<>> namespace_to_quota_;
};

/// The node of `quota`; an error names a namespaces or guaranteed annotation that cannot be read.
kube::Expected<QuotaNode> quotaNodeOf(const apis::ElasticQuota& quota);

}  // namespace koord::manager::webhook
