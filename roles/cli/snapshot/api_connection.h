// The operator commands' connection to the API server, found as kubectl finds it (--kubeconfig,
// $KUBECONFIG, ~/.kube/config, --context), with an io thread of its own for blocking calls.
#pragma once

#include <memory>
#include <string>

#include "koord/kube/rest_client.h"

namespace koord::roles::cli {

class ApiConnection {
 public:
  /// Throws std::runtime_error naming the kubeconfig (and context) when they do not load.
  ApiConnection(const std::string& kubeconfig, const std::string& context);
  ~ApiConnection();
  ApiConnection(const ApiConnection&) = delete;
  ApiConnection& operator=(const ApiConnection&) = delete;

  kube::RestClient& client();
  /// The context's namespace, "default" when it names none.
  const std::string& defaultNamespace() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::roles::cli
