#include "koord/apis/input_limits.h"

#include <fmt/format.h>

namespace koord::apis {

kube::Expected<void> checkValueSize(std::string_view what, std::string_view value,
                                    std::size_t limit) {
  if (value.size() <= limit)
    return {};
  return kube::makeKubeError(
      fmt::format("{}: {} bytes, more than the {} allowed", what, value.size(), limit));
}

}  // namespace koord::apis
