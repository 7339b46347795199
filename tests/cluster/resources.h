// The API resources the cluster tests read and write, named once: collections as ResourceRefs to
// narrow with named() and subresource(), so that no test spells a group or version itself.
#pragma once

#include <string>
#include <utility>

#include "koord/kube/rest_client.h"

namespace koord::testing {

// Inline: koord::testing::kPods works, and `using namespace koord::testing::resources` brings
// in these names alone.
inline namespace resources {

// core/v1
inline const kube::ResourceRef kNamespaces{"", "v1", "namespaces", "", "", ""};
inline const kube::ResourceRef kNodes{"", "v1", "nodes", "", "", ""};
inline const kube::ResourceRef kPods{"", "v1", "pods", "", "", ""};
inline const kube::ResourceRef kEvents{"", "v1", "events", "", "", ""};
inline const kube::ResourceRef kConfigMaps{"", "v1", "configmaps", "", "", ""};
inline const kube::ResourceRef kSecrets{"", "v1", "secrets", "", "", ""};
inline const kube::ResourceRef kServiceAccounts{"", "v1", "serviceaccounts", "", "", ""};
inline const kube::ResourceRef kPodTemplates{"", "v1", "podtemplates", "", "", ""};

// Kubernetes API groups
inline const kube::ResourceRef kLeases{"coordination.k8s.io", "v1", "leases", "", "", ""};
inline const kube::ResourceRef kPriorityClasses{
    "scheduling.k8s.io", "v1", "priorityclasses", "", "", ""};
inline const kube::ResourceRef kPodDisruptionBudgetsV1beta1{
    "policy", "v1beta1", "poddisruptionbudgets", "", "", ""};
inline const kube::ResourceRef kClusterRoles{
    "rbac.authorization.k8s.io", "v1", "clusterroles", "", "", ""};
inline const kube::ResourceRef kClusterRoleBindings{
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "", "", ""};
inline const kube::ResourceRef kMutatingWebhooks{
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "", "", ""};
inline const kube::ResourceRef kValidatingWebhooks{
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "", "", ""};
inline const kube::ResourceRef kCustomResourceDefinitions{
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""};

// Koordinator's CRDs (deploy/crds)
inline const kube::ResourceRef kNodeMetrics{
    "slo.koordinator.sh", "v1alpha1", "nodemetrics", "", "", ""};
inline const kube::ResourceRef kNodeSLOs{"slo.koordinator.sh", "v1alpha1", "nodeslos", "", "", ""};
inline const kube::ResourceRef kColocationProfiles{
    "config.koordinator.sh", "v1alpha1", "clustercolocationprofiles", "", "", ""};
inline const kube::ResourceRef kDevices{
    "scheduling.koordinator.sh", "v1alpha1", "devices", "", "", ""};
inline const kube::ResourceRef kReservations{
    "scheduling.koordinator.sh", "v1alpha1", "reservations", "", "", ""};

}  // namespace resources

/// `ref` narrowed to one object (and namespace).
inline kube::ResourceRef named(kube::ResourceRef ref, const std::string& name,
                               const std::string& ns = "") {
  ref.name = name;
  ref.namespace_ = ns;
  return ref;
}

/// `ref`'s subresource ("status", "binding", "eviction", "token") of object `name` in `ns`.
inline kube::ResourceRef subresource(kube::ResourceRef ref, const std::string& sub,
                                     const std::string& name, const std::string& ns = "") {
  ref = named(std::move(ref), name, ns);
  ref.subresource = sub;
  return ref;
}

}  // namespace koord::testing
