// The kube layer's names for koord::Error and koord::Expected (core/expected.h): parsers and JSON
// projections answer a message naming the bad field plus an error_code.
#pragma once

#include <string>
#include <utility>

#include "koord/core/expected.h"

namespace koord::kube {

using Error = koord::Error;
template <typename T>
using Expected = koord::Expected<T>;

inline Error makeKubeError(std::string message) {
  return invalidArgument(std::move(message));
}

}  // namespace koord::kube
