// Applies the project's own deploy/ manifests (YAML) to the test apiserver, so cluster tests run
// against the CRDs and PriorityClasses an operator would install, not test-only copies.
#pragma once

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "cluster_api.h"
#include "koord/kube/rest_client.h"
#include "yaml_json.h"

namespace koord::testing {

inline std::string deployDir() {
  const char* d = std::getenv("KOORD_DEPLOY_DIR");
  if (d == nullptr || *d == '\0')
    FAIL("KOORD_DEPLOY_DIR is not set");
  return d;
}

/// The chart's own files: the CRDs and PriorityClasses every install applies (deploy/crds and
/// deploy/priority-classes.yaml link here).
inline std::string chartFilesDir() {
  return deployDir() + "/charts/koordinator/files";
}

inline std::string crdsDir() {
  return chartFilesDir() + "/crds";
}

/// The collection an object of this apiVersion/kind lives in (the kinds deploy/ holds).
inline kube::ResourceRef collectionFor(const boost::json::object& obj) {
  std::string api_version(obj.at("apiVersion").as_string());
  std::string kind(obj.at("kind").as_string());
  auto slash = api_version.find('/');
  std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  std::string resource;
  if (kind == "CustomResourceDefinition")
    resource = "customresourcedefinitions";
  else if (kind == "PriorityClass")
    resource = "priorityclasses";
  else
    FAIL("collectionFor: no resource known for kind " << kind);
  return {group, version, resource, "", "", ""};
}

/// Creates each object of the file, or updates it (keeping its resourceVersion) when it exists;
/// CRDs are then waited for until Established.
inline void applyManifestFile(kube::RestClient& client, const std::string& path) {
  std::vector<boost::json::value> docs;
  try {
    docs = yamlFileToJson(path);
  } catch (const std::exception& e) {
    FAIL(path << ": " << e.what());
  }
  for (auto& doc : docs) {
    if (!doc.is_object())
      continue;
    auto& obj = doc.as_object();
    auto ref = collectionFor(obj);
    std::string name(obj.at("metadata").at("name").as_string());
    auto created = client.createSync(ref, obj);
    // PriorityClass values are immutable: an existing one is left as it is.
    if (!created && kube::isAlreadyExists(created.error()) && ref.resource != "priorityclasses") {
      auto named = ref;
      named.name = name;
      // Cluster tests run side by side and apply the same manifests: an update that lost the
      // race to another one (409) reads the object again.
      for (int attempt = 1;; ++attempt) {
        auto current = ok(client.getSync(named), "read existing manifest object");
        obj["metadata"].as_object()["resourceVersion"] =
            current.at("metadata").at("resourceVersion");
        auto updated = client.updateSync(named, obj);
        if (updated || attempt == 5 || !kube::isConflict(updated.error())) {
          ok(std::move(updated), "update manifest object");
          break;
        }
      }
    } else if (!created && !kube::isAlreadyExists(created.error())) {
      FAIL(path << ": creating " << name << ": " << created.error().code << " "
                << created.error().message);
    }
    if (ref.resource == "customresourcedefinitions") {
      auto named = ref;
      named.name = name;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      bool established = false;
      while (!established && std::chrono::steady_clock::now() < deadline) {
        auto crd = client.getSync(named);
        if (crd && crd->is_object()) {
          if (auto* status = crd->as_object().if_contains("status");
              status && status->is_object()) {
            if (auto* conds = status->as_object().if_contains("conditions");
                conds != nullptr && conds->is_array()) {
              for (const auto& c : conds->get_array())
                established |= str(c, {"type"}) == "Established" && str(c, {"status"}) == "True";
            }
          }
        }
        if (!established)
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      if (!established)
        FAIL("CRD " << name << " did not become Established");
    }
  }
}

inline void applyManifestDir(kube::RestClient& client, const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml")
      applyManifestFile(client, entry.path().string());
  }
}

/// Koordinator's CRDs (the chart's files/crds), Established when it returns.
inline void applyCrds(kube::RestClient& client) {
  applyManifestDir(client, crdsDir());
}

/// deploy/priority-classes.yaml: Koordinator's priority classes.
inline void applyPriorityClasses(kube::RestClient& client) {
  applyManifestFile(client, chartFilesDir() + "/priority-classes.yaml");
}

}  // namespace koord::testing
