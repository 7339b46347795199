# Everything comes from Debian 12 packages (scripts/install-deps.sh installs them).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(Boost 1.81 CONFIG REQUIRED COMPONENTS json program_options url)
find_package(fmt REQUIRED)
find_package(OpenSSL 3 REQUIRED)
# CRI and RuntimeHookService (proto/, runtime-proxy and koordlet).
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
if(KOORD_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED)
  include(Catch)
  # Tests apply deploy/'s YAML manifests to the real apiserver (tests/testing/yaml_json).
  find_package(yaml-cpp REQUIRED)
endif()
