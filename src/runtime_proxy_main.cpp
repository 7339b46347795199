// koord-runtime-proxy: the runtime-proxy role as an executable of its own (see roles/roles.def),
// so that only it loads gRPC. Dispatch, --help and version behave as in the koord binary.
#include "koord/core/multicall.h"

#define KOORD_ROLE(id, name, binary, summary)
#define KOORD_ROLE_OWN_EXECUTABLE(id, name, binary, summary) \
  namespace koord::roles::id {                               \
  int roleMain(int argc, char** argv);                       \
  }
#define KOORD_COMMAND(name, summary)
#include "roles.def"
#undef KOORD_ROLE
#undef KOORD_ROLE_OWN_EXECUTABLE
#undef KOORD_COMMAND

namespace {
constexpr koord::RoleEntry kRoles[] = {
#define KOORD_ROLE(id, name, binary, summary)
#define KOORD_ROLE_OWN_EXECUTABLE(id, name, binary, summary) \
  {name, binary, summary, &koord::roles::id::roleMain, false},
#define KOORD_COMMAND(name, summary)
#include "roles.def"
#undef KOORD_ROLE
#undef KOORD_ROLE_OWN_EXECUTABLE
#undef KOORD_COMMAND
};
}  // namespace

int main(int argc, char** argv) {
  return koord::runMulticall(kRoles, argc, argv);
}
