#include "koord/kube/yaml_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace koord::kube {
namespace {

namespace json = boost::json;

// Bounds on what an alias can expand into: a config file is small, a "billion laughs" is not.
constexpr int kMaxDepth = 100;
constexpr std::size_t kMaxNodes = 1'000'000;

constexpr std::string_view kCoreTagPrefix = "tag:yaml.org,2002:";

struct Scalar {
  enum class Kind { kNull, kBool, kInt, kUint, kFloat, kString };
  Kind kind = Kind::kString;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
};

Scalar nullScalar() {
  return Scalar{Scalar::Kind::kNull};
}
Scalar boolScalar(bool b) {
  Scalar s{Scalar::Kind::kBool};
  s.b = b;
  return s;
}
Scalar floatScalar(double d) {
  Scalar s{Scalar::Kind::kFloat};
  s.d = d;
  return s;
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

bool oneOf(std::string_view s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (s == w)
      return true;
  }
  return false;
}

// go-yaml v2's table of words, looked up before any number syntax.
std::optional<Scalar> resolveWord(std::string_view s) {
  if (oneOf(s, {"", "~", "null", "Null", "NULL"}))
    return nullScalar();
  if (oneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}))
    return boolScalar(true);
  if (oneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}))
    return boolScalar(false);
  if (oneOf(s, {".nan", ".NaN", ".NAN"}))
    return floatScalar(std::numeric_limits<double>::quiet_NaN());
  if (oneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}))
    return floatScalar(std::numeric_limits<double>::infinity());
  if (oneOf(s, {"-.inf", "-.Inf", "-.INF"}))
    return floatScalar(-std::numeric_limits<double>::infinity());
  return std::nullopt;
}

// strconv.ParseInt(s, 0, 64), then ParseUint(s, 0, 64) (which takes no sign).
std::optional<Scalar> goInteger(std::string_view s) {
  bool negative = false;
  bool signed_text = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    signed_text = true;
    s.remove_prefix(1);
  }
  if (s.empty())
    return std::nullopt;
  unsigned base = 10;
  if (s.front() == '0') {
    const char p = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : '\0';
    if (p == 'b' || p == 'o' || p == 'x') {
      base = p == 'b' ? 2 : (p == 'o' ? 8 : 16);
      s.remove_prefix(2);
    } else {
      base = 8;  // Go reads a leading 0 as octal
      s.remove_prefix(1);
    }
  }
  std::uint64_t n = 0;
  for (char c : s) {
    unsigned digit = 0;
    if (isDigit(c))
      digit = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'z')
      digit = static_cast<unsigned>(c - 'a') + 10;
    else if (c >= 'A' && c <= 'Z')
      digit = static_cast<unsigned>(c - 'A') + 10;
    else
      return std::nullopt;
    if (digit >= base || n > (std::numeric_limits<std::uint64_t>::max() - digit) / base)
      return std::nullopt;
    n = n * base + digit;
  }
  constexpr std::uint64_t kInt64Limit = std::uint64_t{1} << 63;
  Scalar out{Scalar::Kind::kInt};
  if (negative && n <= kInt64Limit) {
    out.i =
        n == kInt64Limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(n);
    return out;
  }
  if (!negative && n < kInt64Limit) {
    out.i = static_cast<std::int64_t>(n);
    return out;
  }
  if (signed_text)
    return std::nullopt;
  out.kind = Scalar::Kind::kUint;
  out.u = n;
  return out;
}

// go-yaml v2's yamlStyleFloat: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool yamlStyleFloat(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && isDigit(s[i]))
      ++i;
    return i > start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits())
      return false;
  } else {
    if (!digits())
      return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
      ++i;
    if (!digits())
      return false;
  }
  return i == s.size();
}

// strconv.ParseFloat on text yamlStyleFloat accepted: an overflow is an error there (the
// scalar then stays a string), an underflow is zero.
std::optional<Scalar> goFloat(std::string_view s) {
  double d = 0;
  const char* first = s.data();
  if (!s.empty() && s.front() == '+')
    ++first;  // from_chars takes no '+'
  const auto [end, ec] = std::from_chars(first, s.data() + s.size(), d);
  if (end != s.data() + s.size())
    return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    const std::size_t e = s.find_first_of("eE");
    const bool negative_exponent =
        e != std::string_view::npos && e + 1 < s.size() && s[e + 1] == '-';
    const std::string_view mantissa = s.substr(0, e);
    const bool fraction_only =
        mantissa.find_first_of("123456789") > mantissa.find('.');  // 0.000...x
    if (!negative_exponent && !fraction_only)
      return std::nullopt;
    d = (!s.empty() && s.front() == '-') ? -0.0 : 0.0;
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  return floatScalar(d);
}

// go-yaml v2's resolve() for an untagged plain scalar.
Scalar resolvePlain(std::string_view in) {
  if (auto word = resolveWord(in))
    return *word;
  const char first = in.empty() ? '\0' : in.front();
  if (first == '.') {
    if (yamlStyleFloat(in)) {
      if (auto f = goFloat(in))
        return *f;
    }
    return Scalar{};
  }
  if (!isDigit(first) && first != '+' && first != '-')
    return Scalar{};
  std::string plain;
  plain.reserve(in.size());
  for (char c : in) {
    if (c != '_')
      plain.push_back(c);
  }
  if (auto i = goInteger(plain))
    return *i;
  if (yamlStyleFloat(plain)) {
    if (auto f = goFloat(plain))
      return *f;
  }
  return Scalar{};
}

// strconv.FormatFloat(f, 'g', -1, 32), which sigs.k8s.io/yaml uses for a float map key.
std::string goFloat32Key(double d) {
  if (std::isnan(d))
    return ".nan";
  // Go's float32(d) rounds a finite double beyond float's range to an infinity, which FormatFloat
  // spells "+Inf" and sigs.k8s.io/yaml then ".inf"; to_chars would print "inf" without the
  // exponent the code below looks for (found by tests/fuzz/scheduler_config_fuzz).
  const auto f = static_cast<float>(d);
  if (std::isinf(f))
    return f > 0 ? ".inf" : "-.inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));  // "-1.25e+02"
  const std::size_t e = sci.find('e');
  std::string_view mantissa = sci.substr(0, e);
  const bool negative = !mantissa.empty() && mantissa.front() == '-';
  if (negative)
    mantissa.remove_prefix(1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.')
      digits.push_back(c);
  }
  int exp = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp);
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  } else if (exp < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  } else {
    const auto int_digits = static_cast<std::size_t>(exp) + 1;
    if (digits.size() <= int_digits) {
      out += digits + std::string(int_digits - digits.size(), '0');
    } else {
      out += digits.substr(0, int_digits) + "." + digits.substr(int_digits);
    }
  }
  return out;
}

std::string childPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

Error errorAt(const std::string& path, const YAML::Node& node, std::string_view message) {
  const YAML::Mark mark = node.Mark();
  std::string where = mark.line >= 0 ? fmt::format(" (line {})", mark.line + 1) : std::string();
  if (path.empty())
    return kube::makeKubeError(fmt::format("{}{}", message, where));
  return kube::makeKubeError(fmt::format("{}: {}{}", path, message, where));
}

class Converter {
 public:
  Expected<json::value> convert(const YAML::Node& node, const std::string& path, int depth) {
    if (depth > kMaxDepth)
      return errorAt(path, node, fmt::format("nested deeper than {} levels", kMaxDepth));
    if (++nodes_ > kMaxNodes)
      return errorAt(path, node, fmt::format("expands to more than {} nodes", kMaxNodes));
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return json::value(nullptr);
      case YAML::NodeType::Scalar:
        return scalarValue(node, path);
      case YAML::NodeType::Sequence: {
        json::array out;
        out.reserve(node.size());
        std::size_t i = 0;
        for (const auto& item : node) {
          auto v = convert(item, fmt::format("{}[{}]", path, i++), depth + 1);
          if (!v)
            return v.error();
          out.push_back(std::move(*v));
        }
        return json::value(std::move(out));
      }
      case YAML::NodeType::Map:
        return mapValue(node, path, depth);
    }
    return errorAt(path, node, "unknown YAML node type");
  }

 private:
  static Expected<Scalar> scalarOf(const YAML::Node& node, const std::string& path) {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    if (tag == "?")
      return resolvePlain(text);
    if (!tag.starts_with(kCoreTagPrefix))
      return Scalar{};  // quoted and block scalars ("!"), local tags: the text
    const std::string_view type = std::string_view(tag).substr(kCoreTagPrefix.size());
    if (type == "str")
      return Scalar{};
    Scalar s = resolvePlain(text);
    using K = Scalar::Kind;
    const bool ok =
        (type == "int" && (s.kind == K::kInt || s.kind == K::kUint)) ||
        (type == "float" && (s.kind == K::kFloat || s.kind == K::kInt || s.kind == K::kUint)) ||
        (type == "bool" && s.kind == K::kBool) || (type == "null" && s.kind == K::kNull);
    if (type != "int" && type != "float" && type != "bool" && type != "null")
      return errorAt(path, node, fmt::format("unsupported tag !!{}", type));
    if (!ok)
      return errorAt(path, node, fmt::format("cannot decode {:?} as !!{}", text, type));
    if (type == "float" && s.kind == K::kInt)
      return floatScalar(static_cast<double>(s.i));
    if (type == "float" && s.kind == K::kUint)
      return floatScalar(static_cast<double>(s.u));
    return s;
  }

  static Expected<json::value> scalarValue(const YAML::Node& node, const std::string& path) {
    auto s = scalarOf(node, path);
    if (!s)
      return s.error();
    switch (s->kind) {
      case Scalar::Kind::kNull:
        return json::value(nullptr);
      case Scalar::Kind::kBool:
        return json::value(s->b);
      case Scalar::Kind::kInt:
        return json::value(s->i);
      case Scalar::Kind::kUint:
        return json::value(s->u);
      case Scalar::Kind::kFloat: {
        const double d = s->d;
        if (!std::isfinite(d))
          return errorAt(path, node, fmt::format("{:?} has no JSON form", node.Scalar()));
        // Go's encoder writes an integral float without a fraction, so the strict decoder
        // then reads "1e3" into an int field.
        constexpr double kInt64Bound = 9223372036854775808.0;
        if (std::trunc(d) == d && d > -kInt64Bound && d < kInt64Bound)
          return json::value(static_cast<std::int64_t>(d));
        return json::value(d);
      }
      case Scalar::Kind::kString:
        return json::value(node.Scalar());
    }
    return json::value(node.Scalar());
  }

  static Expected<std::string> keyOf(const YAML::Node& key, const std::string& path) {
    if (key.IsNull())
      return errorAt(path, key, "null map key");
    if (!key.IsScalar())
      return errorAt(path, key, "map key is not a scalar");
    auto s = scalarOf(key, path);
    if (!s)
      return s.error();
    switch (s->kind) {
      case Scalar::Kind::kNull:
        return errorAt(path, key, "null map key");
      case Scalar::Kind::kBool:
        return std::string(s->b ? "true" : "false");
      case Scalar::Kind::kInt:
        return std::to_string(s->i);
      case Scalar::Kind::kUint:
        return std::to_string(s->u);
      case Scalar::Kind::kFloat:
        return goFloat32Key(s->d);
      case Scalar::Kind::kString:
        return key.Scalar();
    }
    return key.Scalar();
  }

  static bool isMergeKey(const YAML::Node& key) {
    return key.IsScalar() && key.Tag() == "?" && key.Scalar() == "<<";
  }

  Expected<json::value> mapValue(const YAML::Node& node, const std::string& path, int depth) {
    json::object out;
    std::vector<std::pair<YAML::Node, std::string>> merges;  // applied after explicit keys win
    for (const auto& kv : node) {
      if (isMergeKey(kv.first)) {
        merges.emplace_back(kv.second, childPath(path, "<<"));
        continue;
      }
      auto key = keyOf(kv.first, path);
      if (!key)
        return key.error();
      if (out.contains(*key))
        return errorAt(path, kv.first, fmt::format("duplicate key {:?}", *key));
      auto v = convert(kv.second, childPath(path, *key), depth + 1);
      if (!v)
        return v.error();
      out.emplace(*key, std::move(*v));
    }
    for (const auto& [source, merge_path] : merges) {
      std::vector<YAML::Node> maps;
      if (source.IsMap()) {
        maps.push_back(source);
      } else if (source.IsSequence()) {
        for (const auto& item : source)
          maps.push_back(item);
      } else {
        return errorAt(merge_path, source, "expected a map or a list of maps to merge");
      }
      for (const auto& m : maps) {
        if (!m.IsMap())
          return errorAt(merge_path, m, "expected a map or a list of maps to merge");
        auto merged = convert(m, merge_path, depth + 1);
        if (!merged)
          return merged.error();
        for (auto& kv : merged->get_object()) {
          if (!out.contains(kv.key()))
            out.emplace(kv.key(), std::move(kv.value()));
        }
      }
    }
    return json::value(std::move(out));
  }

  std::size_t nodes_ = 0;
};

// Only watches where each document starts: the events of its nodes are not needed.
class DocumentStarts final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  YAML::Mark start = YAML::Mark::null_mark();
};

// yaml-cpp 0.7 (Debian 12) never consumes a ',' outside a flow collection where a node should
// start (",", "- ,", "\"x\" ,"): LoadAll then parses the same token as one empty document after
// another and never returns (found by tests/fuzz/scheduler_config_fuzz). Documents always
// consume their first token otherwise, so one starting where the previous one started is that
// loop; this pass finds it before LoadAll runs. Throws YAML::Exception as LoadAll does.
void refuseStuckDocuments(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  std::optional<int> last_pos;
  while (parser.HandleNextDocument(starts)) {
    if (last_pos == starts.start.pos)
      throw YAML::ParserException(starts.start, "unexpected ','");
    last_pos = starts.start.pos;
  }
}

}  // namespace

Expected<json::value> yamlToJson(std::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    const std::string copy(text);
    refuseStuckDocuments(copy);
    docs = YAML::LoadAll(copy);
  } catch (const YAML::Exception& e) {
    if (e.mark.line >= 0) {
      return kube::makeKubeError(fmt::format("malformed YAML at line {}, column {}: {}",
                                             e.mark.line + 1, e.mark.column + 1, e.msg));
    }
    return kube::makeKubeError(fmt::format("malformed YAML: {}", e.msg));
  }
  // A trailing "---" leaves an empty document behind; only real ones count.
  while (!docs.empty() && docs.back().IsNull())
    docs.pop_back();
  if (docs.empty())
    return json::value(nullptr);
  if (docs.size() > 1) {
    return kube::makeKubeError(fmt::format("expected one YAML document, found {}", docs.size()));
  }
  Converter converter;
  return converter.convert(docs.front(), "", 0);
}

}  // namespace koord::kube
