#include "status.h"

namespace koord::roles::scheduler {

const std::vector<std::string> Status::kNoReasons;
const std::string Status::kNoPlugin;

std::string Status::message() const {
  std::string out;
  for (const auto& r : reasons()) {
    if (!out.empty())
      out += ", ";
    out += r;
  }
  return out;
}

}  // namespace koord::roles::scheduler
