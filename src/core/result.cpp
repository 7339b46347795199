#include "koord/core/result.h"

namespace koord {
namespace {

class KoordCategory : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "koord"; }
  std::string message(int ev) const override {
    switch (static_cast<Errc>(ev)) {
      case Errc::kOk:
        return "ok";
      case Errc::kTimeout:
        return "deadline exceeded";
      case Errc::kBodyTooLarge:
        return "body too large";
      case Errc::kBadResponse:
        return "malformed response";
      case Errc::kTlsVerifyFailed:
        return "TLS certificate verification failed";
      case Errc::kShuttingDown:
        return "shutting down";
      case Errc::kInvalidArgument:
        return "invalid argument";
    }
    return "unknown koord error";
  }
};

}  // namespace

const boost::system::error_category& koordCategory() {
  static const KoordCategory category;
  return category;
}

}  // namespace koord
