#include "plugins/upstream/storage/storage_informers.h"

#include <string>

#include "framework/declared_informer.h"
#include "plugins/upstream/storage/storage_objects.h"

namespace koord::roles::scheduler::storage {

ObjectDeclaration declarePersistentVolumes() {
  return declareInformer<PersistentVolume>({
      .key = std::string(kPersistentVolumes),
      .resource = {"", "v1", "persistentvolumes", "", "", ""},
      .project = decodePersistentVolume,
  });
}

ObjectDeclaration declarePersistentVolumeClaims() {
  return declareInformer<PersistentVolumeClaim>({
      .key = std::string(kPersistentVolumeClaims),
      .resource = {"", "v1", "persistentvolumeclaims", "", "", ""},
      .project = decodePersistentVolumeClaim,
  });
}

ObjectDeclaration declareStorageClasses() {
  return declareInformer<StorageClass>({
      .key = std::string(kStorageClasses),
      .resource = {"storage.k8s.io", "v1", "storageclasses", "", "", ""},
      .project = decodeStorageClass,
      .versions = {"v1", "v1beta1"},
  });
}

ObjectDeclaration declareCSINodes() {
  return declareInformer<CSINode>({
      .key = std::string(kCSINodes),
      .resource = {"storage.k8s.io", "v1", "csinodes", "", "", ""},
      .project = decodeCSINode,
      .versions = {"v1", "v1beta1"},
  });
}

}  // namespace koord::roles::scheduler::storage
