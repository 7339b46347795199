#include "koord/kube/kubeconfig.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace koord::kube {

namespace {

namespace fs = std::filesystem;

Expected<std::string> readFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeKubeError(fmt::format("{}: cannot read {}", what, path));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad())
    return makeKubeError(fmt::format("{}: error reading {}", what, path));
  return out.str();
}

// Kubeconfig paths are relative to the file that names them, not to the process's cwd.
std::string resolvePath(const fs::path& dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute())
    return p;
  return (dir / p).lexically_normal().string();
}

// A scalar child of `node` as a string ("" when absent). yaml-cpp throws on a non-scalar; the
// caller's error names `where.key` instead.
Expected<std::string> scalar(const YAML::Node& node, const char* key, const std::string& where) {
  const YAML::Node child = node[key];
  if (!child || child.IsNull())
    return std::string();
  if (!child.IsScalar())
    return makeKubeError(fmt::format("{}.{}: expected a string", where, key));
  return child.Scalar();
}

Expected<bool> boolean(const YAML::Node& node, const char* key, const std::string& where) {
  const YAML::Node child = node[key];
  if (!child || child.IsNull())
    return false;
  bool out = false;
  if (!child.IsScalar() || !YAML::convert<bool>::decode(child, out))
    return makeKubeError(fmt::format("{}.{}: expected true or false", where, key));
  return out;
}

// The `inner` map of the list entry of `list` named `name` (clusters[].cluster, ...).
// YAML::Node converts from anything, so Expected<YAML::Node> needs its error made explicit.
Expected<YAML::Node> nodeError(std::string message) {
  return Expected<YAML::Node>(boost::system::in_place_error, makeKubeError(std::move(message)));
}

Expected<YAML::Node> findNamed(const YAML::Node& root, const char* list, const char* inner,
                               const std::string& name) {
  const YAML::Node items = root[list];
  if (items && !items.IsNull()) {
    if (!items.IsSequence())
      return nodeError(fmt::format("{}: expected a list", list));
    for (std::size_t i = 0; i < items.size(); ++i) {
      const YAML::Node item = items[i];
      if (!item.IsMap())
        return nodeError(fmt::format("{}[{}]: expected a map", list, i));
      const YAML::Node n = item["name"];
      if (n && n.IsScalar() && n.Scalar() == name) {
        const YAML::Node body = item[inner];
        if (body && !body.IsNull() && !body.IsMap())
          return nodeError(fmt::format("{}[{}].{}: expected a map", list, name, inner));
        return body ? body : YAML::Node(YAML::NodeType::Map);
      }
    }
  }
  return nodeError(fmt::format("{}: no entry named \"{}\"", list, name));
}

// Reads `key` (a path) and `key-data` (base64) of one cluster or user entry.
struct FileOrData {
  std::string file, pem;
};
Expected<FileOrData> fileOrData(const YAML::Node& node, const std::string& key,
                                const std::string& where, const fs::path& dir) {
  auto file = scalar(node, key.c_str(), where);
  if (!file)
    return file.error();
  const std::string data_key = key + "-data";
  auto data = scalar(node, data_key.c_str(), where);
  if (!data)
    return data.error();
  FileOrData out;
  // client-go: the inline data wins over the file when both are given.
  if (!data->empty()) {
    auto pem = decodeBase64(*data);
    if (!pem)
      return makeKubeError(fmt::format("{}.{}: {}", where, data_key, pem.error().message));
    out.pem = std::move(*pem);
  } else {
    out.file = resolvePath(dir, *file);
  }
  return out;
}

Expected<RestConfig> loadParsed(const YAML::Node& root, const std::string& path,
                                const std::string& context_flag) {
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  if (!root.IsMap())
    return makeKubeError("expected a map at the top level");
  auto current = scalar(root, "current-context", "");
  if (!current)
    return current.error();
  const std::string context_name = context_flag.empty() ? *current : context_flag;
  if (context_name.empty())
    return makeKubeError("current-context: not set and no context was asked for");

  auto context = findNamed(root, "contexts", "context", context_name);
  if (!context)
    return context.error();
  const std::string cwhere = fmt::format("contexts[{}].context", context_name);
  auto cluster_name = scalar(*context, "cluster", cwhere);
  if (!cluster_name)
    return cluster_name.error();
  auto user_name = scalar(*context, "user", cwhere);
  if (!user_name)
    return user_name.error();
  auto ns = scalar(*context, "namespace", cwhere);
  if (!ns)
    return ns.error();
  if (cluster_name->empty())
    return makeKubeError(cwhere + ".cluster: not set");

  RestConfig config;
  config.default_namespace = *ns;

  auto cluster = findNamed(root, "clusters", "cluster", *cluster_name);
  if (!cluster)
    return cluster.error();
  const std::string kwhere = fmt::format("clusters[{}].cluster", *cluster_name);
  auto server = scalar(*cluster, "server", kwhere);
  if (!server)
    return server.error();
  if (server->empty())
    return makeKubeError(kwhere + ".server: not set");
  config.host = *server;
  // client-go defaults a bare host:port to https.
  if (config.host.find("://") == std::string::npos)
    config.host = "https://" + config.host;
  while (config.host.size() > 1 && config.host.back() == '/')
    config.host.pop_back();
  auto ca = fileOrData(*cluster, "certificate-authority", kwhere, dir);
  if (!ca)
    return ca.error();
  config.ca_file = ca->file;
  config.ca_pem = ca->pem;
  auto insecure = boolean(*cluster, "insecure-skip-tls-verify", kwhere);
  if (!insecure)
    return insecure.error();
  config.insecure_skip_verify = *insecure;
  auto sni = scalar(*cluster, "tls-server-name", kwhere);
  if (!sni)
    return sni.error();
  config.tls_server_name = *sni;

  // A context without a user is anonymous.
  if (!user_name->empty()) {
    auto user = findNamed(root, "users", "user", *user_name);
    if (!user)
      return user.error();
    const std::string uwhere = fmt::format("users[{}].user", *user_name);
    for (const char* unsupported : {"exec", "auth-provider"}) {
      if ((*user)[unsupported])
        return makeKubeError(fmt::format(
            "{}.{}: credential plugins are not supported; use a token or a client certificate",
            uwhere, unsupported));
    }
    auto cert = fileOrData(*user, "client-certificate", uwhere, dir);
    if (!cert)
      return cert.error();
    auto key = fileOrData(*user, "client-key", uwhere, dir);
    if (!key)
      return key.error();
    config.client_cert_file = cert->file;
    config.client_cert_pem = cert->pem;
    config.client_key_file = key->file;
    config.client_key_pem = key->pem;
    auto token = scalar(*user, "token", uwhere);
    if (!token)
      return token.error();
    config.bearer_token = *token;
    auto token_file = scalar(*user, "tokenFile", uwhere);
    if (!token_file)
      return token_file.error();
    if (!token_file->empty()) {
      config.bearer_token_file = resolvePath(dir, *token_file);
      // Read now so that a missing file is a config error that names the key.
      auto t = readFile(config.bearer_token_file, uwhere + ".tokenFile");
      if (!t)
        return t.error();
      if (config.bearer_token.empty())
        config.bearer_token = std::move(*t);
    }
    while (!config.bearer_token.empty() &&
           std::isspace(static_cast<unsigned char>(config.bearer_token.back())))
      config.bearer_token.pop_back();
  }
  return config;
}

}  // namespace

std::string encodeBase64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                      (std::uint32_t{static_cast<unsigned char>(in[i + 1])} << 8) |
                      std::uint32_t{static_cast<unsigned char>(in[i + 2])};
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (std::size_t rest = in.size() - i; rest > 0) {
    std::uint32_t n = std::uint32_t{static_cast<unsigned char>(in[i])} << 16;
    if (rest == 2)
      n |= std::uint32_t{static_cast<unsigned char>(in[i + 1])} << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Expected<std::string> decodeBase64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::string clean;
  clean.reserve(in.size());
  for (char c : in) {
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t')
      continue;
    clean.push_back(c);
  }
  if (clean.size() % 4 != 0)
    return makeKubeError("illegal base64 data: length is not a multiple of 4");
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  for (std::size_t i = 0; i < clean.size(); i += 4) {
    const bool last = i + 4 == clean.size();
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      char c = clean[i + j];
      if (c == '=' && last && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[j] = value(c)) < 0)
        return makeKubeError(fmt::format("illegal base64 data at input byte {}", i + j));
    }
    const unsigned n =
        (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) | (unsigned(v[2]) << 6) | unsigned(v[3]);
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    if (pad < 2)
      out.push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1)
      out.push_back(static_cast<char>(n & 0xff));
  }
  return out;
}

Expected<RestConfig> loadKubeconfig(const std::string& path, const std::string& context) {
  auto text = readFile(path, "kubeconfig");
  if (!text)
    return text.error();
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return makeKubeError(fmt::format("kubeconfig {}: {}", path, e.what()));
  }
  try {
    auto config = loadParsed(root, path, context);
    if (!config)
      return makeKubeError(fmt::format("kubeconfig {}: {}", path, config.error().message));
    return config;
  } catch (const YAML::Exception& e) {
    // Lookups on malformed documents can still throw; the file is at fault, not the caller.
    return makeKubeError(fmt::format("kubeconfig {}: {}", path, e.what()));
  }
}

Expected<RestConfig> inClusterConfig(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0')
    return makeKubeError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  const fs::path dir(root);
  RestConfig config;
  const std::string h(host);
  // net.JoinHostPort: IPv6 literals need brackets.
  config.host = h.find(':') != std::string::npos ? fmt::format("https://[{}]:{}", h, port)
                                                 : fmt::format("https://{}:{}", h, port);
  config.bearer_token_file = (dir / "token").string();
  auto token = readFile(config.bearer_token_file, "in-cluster config: token");
  if (!token)
    return token.error();
  config.bearer_token = std::move(*token);
  while (!config.bearer_token.empty() &&
         std::isspace(static_cast<unsigned char>(config.bearer_token.back())))
    config.bearer_token.pop_back();
  config.ca_file = (dir / "ca.crt").string();
  if (std::error_code ec; !fs::exists(config.ca_file, ec))
    return makeKubeError(fmt::format("in-cluster config: ca.crt: cannot read {}", config.ca_file));
  // The namespace file is optional, as in client-go.
  if (auto ns = readFile((dir / "namespace").string(), "namespace"); ns)
    config.default_namespace = *ns;
  return config;
}

Expected<RestConfig> resolveConfig(const std::string& kubeconfig_flag) {
  if (!kubeconfig_flag.empty())
    return loadKubeconfig(kubeconfig_flag);
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::string_view list(env);
    while (!list.empty()) {
      auto colon = list.find(':');
      std::string_view first = list.substr(0, colon);
      if (!first.empty())
        return loadKubeconfig(std::string(first));
      if (colon == std::string_view::npos)
        break;
      list.remove_prefix(colon + 1);
    }
  }
  auto in_cluster = inClusterConfig();
  if (in_cluster)
    return in_cluster;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    const std::string path = (fs::path(home) / ".kube" / "config").string();
    if (std::error_code ec; fs::exists(path, ec))
      return loadKubeconfig(path);
  }
  return makeKubeError(fmt::format(
      "no API server configured: no --kubeconfig, no $KUBECONFIG, no ~/.kube/config, and {}",
      in_cluster.error().message));
}

}  // namespace koord::kube
