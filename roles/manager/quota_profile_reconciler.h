// The quotaprofile controller's reconcile: for one ElasticQuotaProfile, gives it a tree id and
// creates or updates the ElasticQuota it names from the nodes its selector picks.
#pragma once

#include <string>

#include "controller/controller.h"

namespace koord::kube {
class RestClient;
}

namespace koord::roles::manager {

struct ManagerInformers;

class QuotaProfileReconciler {
 public:
  QuotaProfileReconciler(kube::RestClient& client, ManagerInformers& informers);

  /// `key` is "namespace/name". Looks again after 10 s whatever happened (the nodes' allocatable
  /// moves without any profile event), after 2 s when the quota could not be written.
  ReconcileResult reconcile(const std::string& key);

 private:
  kube::RestClient& client_;
  ManagerInformers& informers_;
};

}  // namespace koord::roles::manager
