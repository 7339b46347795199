// One hook call's round trip, alone: koord's gRPC client and server (what runtime-proxy and the
// koordlet use) against grpc++'s, on a unix socket, after a pause between calls as between the
// calls of a pod's start (both ends idle, caches cold) and back to back. No runtime, no relay:
// what the hooks' transport costs on this machine.
//
//   koord_bench_hook_roundtrip [--calls 500] [--gaps 0,20,100]
#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_stats.h"
#include "koord/h2/grpc_unary_client.h"
#include "koord/h2/grpc_unary_server.h"
#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"

namespace hookapi = ::runtime::v1alpha1;
using Clock = std::chrono::steady_clock;
using koord::bench::percentile;

namespace {

const std::string kPath = "/runtime.v1alpha1.RuntimeHookService/PreCreateContainerHook";

// What the koordlet's BatchResource answers for a BE container, more or less.
hookapi::ContainerResourceHookResponse answer() {
  hookapi::ContainerResourceHookResponse resp;
  auto* r = resp.mutable_container_resources();
  r->set_cpu_shares(2);
  r->set_cpu_period(100000);
  r->set_cpu_quota(50000);
  r->set_memory_limit_in_bytes(512 << 20);
  return resp;
}

hookapi::ContainerResourceHookRequest request() {
  hookapi::ContainerResourceHookRequest req;
  req.mutable_pod_meta()->set_name("spark-executor-1");
  req.mutable_pod_meta()->set_namespace_("default");
  req.mutable_pod_meta()->set_uid("6c1e1b6a-4c3c-4a57-9a53-9f1d5c6d2e11");
  (*req.mutable_pod_labels())["koordinator.sh/qosClass"] = "BE";
  (*req.mutable_pod_annotations())["node.koordinator.sh/extended-resource-spec"] =
      R"({"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"500","kubernetes.io/batch-memory":"512Mi"}}}})";
  req.mutable_container_meta()->set_name("main");
  req.set_pod_cgroup_parent("/kubepods/besteffort/pod6c1e1b6a");
  return req;
}

class GrpcppHooks final : public hookapi::RuntimeHookService::Service {
  grpc::Status PreCreateContainerHook(grpc::ServerContext*,
                                      const hookapi::ContainerResourceHookRequest*,
                                      hookapi::ContainerResourceHookResponse* resp) override {
    *resp = answer();
    return grpc::Status::OK;
  }
};

double micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// koord's client, driven from this thread's io_context: one call, run until it is answered.
double koordCall(boost::asio::io_context& io, koord::h2::GrpcUnaryClient& client,
                 const std::string& bytes) {
  bool ok = false;
  bool done = false;
  const auto t0 = Clock::now();
  client.call(kPath, bytes, std::chrono::seconds(5),
              [&](const koord::h2::GrpcStatus& status, std::string response) {
                hookapi::ContainerResourceHookResponse parsed;
                ok = status.ok() && parsed.ParseFromString(response);
                done = true;
              });
  io.restart();
  while (!done)
    io.run_one();
  const double us = micros(Clock::now() - t0);
  if (!ok)
    throw std::runtime_error("a koord client call failed");
  return us;
}

double grpcppCall(hookapi::RuntimeHookService::Stub& stub,
                  const hookapi::ContainerResourceHookRequest& req) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  hookapi::ContainerResourceHookResponse resp;
  const auto t0 = Clock::now();
  const auto status = stub.PreCreateContainerHook(&ctx, req, &resp);
  const double us = micros(Clock::now() - t0);
  if (!status.ok())
    throw std::runtime_error("a grpc++ call failed: " + status.error_message());
  return us;
}

}  // namespace

int main(int argc, char** argv) try {
  int calls = 500;
  std::vector<int> gaps = {0, 20, 100};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) {
      calls = std::stoi(argv[++i]);
    } else if (a == "--gaps" && i + 1 < argc) {
      gaps.clear();
      std::string list = argv[++i];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        gaps.push_back(std::stoi(list.substr(at, comma - at)));
        at = comma + 1;
      }
    } else {
      throw std::invalid_argument(
          "usage: koord_bench_hook_roundtrip [--calls N] [--gaps 0,20,100]");
    }
  }
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("koord-bench-hooks-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string koord_socket = (dir / "koord.sock").string();
  const std::string grpcpp_socket = (dir / "grpcpp.sock").string();

  koord::h2::GrpcUnaryServer koord_server;
  koord_server.addMethod(kPath, [](std::string_view bytes, std::string& out) {
    hookapi::ContainerResourceHookRequest req;
    if (!req.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return koord::h2::GrpcStatus{koord::h2::GrpcCode::kInvalidArgument, "does not parse"};
    out = answer().SerializeAsString();
    return koord::h2::GrpcStatus{};
  });
  koord_server.start(koord_socket);
  GrpcppHooks grpcpp_hooks;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + grpcpp_socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&grpcpp_hooks);
  auto grpcpp_server = builder.BuildAndStart();

  boost::asio::io_context io(1);
  koord::h2::GrpcUnaryClient to_koord(io, koord_socket);
  koord::h2::GrpcUnaryClient to_grpcpp(io, grpcpp_socket);
  auto stub_koord = hookapi::RuntimeHookService::NewStub(
      grpc::CreateChannel("unix:" + koord_socket, grpc::InsecureChannelCredentials()));
  auto stub_grpcpp = hookapi::RuntimeHookService::NewStub(
      grpc::CreateChannel("unix:" + grpcpp_socket, grpc::InsecureChannelCredentials()));
  const auto req = request();
  const std::string bytes = req.SerializeAsString();

  struct Pair {
    std::string name;
    std::function<double()> call;
  };
  const std::vector<Pair> pairs = {
      {"koord client -> koord server (proxy -> koordlet)",
       [&] { return koordCall(io, to_koord, bytes); }},
      {"koord client -> grpc++ server", [&] { return koordCall(io, to_grpcpp, bytes); }},
      {"grpc++ client -> koord server", [&] { return grpcppCall(*stub_koord, req); }},
      {"grpc++ client -> grpc++ server (before)", [&] { return grpcppCall(*stub_grpcpp, req); }},
  };
  fmt::print("hook round trip (PreCreateContainerHook, {} calls per row; us)\n", calls);
  fmt::print("{:<50} {:>6} {:>8} {:>8} {:>8} {:>8}\n", "client -> server", "gap ms", "p50", "p90",
             "p99", "max");
  for (const int gap : gaps) {
    for (const auto& pair : pairs) {
      for (int i = 0; i < 20; ++i)
        pair.call();  // connections made, code paths seen once
      std::vector<double> us;
      us.reserve(calls);
      for (int i = 0; i < calls; ++i) {
        if (gap > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(gap));
        us.push_back(pair.call());
      }
      fmt::print("{:<50} {:>6} {:>8.0f} {:>8.0f} {:>8.0f} {:>8.0f}\n", pair.name, gap,
                 percentile(us, 0.5), percentile(us, 0.9), percentile(us, 0.99),
                 *std::max_element(us.begin(), us.end()));
    }
  }
  grpcpp_server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  koord_server.stop();
  std::filesystem::remove_all(dir);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "koord_bench_hook_roundtrip: {}\n", e.what());
  return 1;
}
