// The informers of the storage objects, declared by every volume plugin that reads them (one
// informer per kind however many declare it), and the keys plugins look their sources up by.
#pragma once

#include <string_view>

#include "framework/declared_object.h"

namespace koord::roles::scheduler::storage {

/// ClusterView::source<T>(key) keys: PersistentVolume, PersistentVolumeClaim ("namespace/name"),
/// StorageClass, CSINode.
inline constexpr std::string_view kPersistentVolumes = "v1/persistentvolumes";
inline constexpr std::string_view kPersistentVolumeClaims = "v1/persistentvolumeclaims";
inline constexpr std::string_view kStorageClasses = "storage.k8s.io/storageclasses";
inline constexpr std::string_view kCSINodes = "storage.k8s.io/csinodes";

ObjectDeclaration declarePersistentVolumes();
ObjectDeclaration declarePersistentVolumeClaims();
/// storage.k8s.io v1 (v1beta1 on older servers), found by discovery.
ObjectDeclaration declareStorageClasses();
ObjectDeclaration declareCSINodes();

}  // namespace koord::roles::scheduler::storage
