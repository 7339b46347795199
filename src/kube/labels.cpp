#include "koord/kube/labels.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

namespace koord::kube {
namespace {

constexpr std::size_t kMaxNameLength = 63;
constexpr std::size_t kMaxSubdomainLength = 253;

bool isAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool isQualifiedNamePart(std::string_view s) {
  if (s.empty() || !isAlnum(s.front()) || !isAlnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool isDns1123Label(std::string_view s) {
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || !lower_alnum(s.front()) || !lower_alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return lower_alnum(c) || c == '-'; });
}

// Go's strconv.ParseInt(s, 10, 64).
std::optional<std::int64_t> parseInt64(std::string_view s) {
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  if (s.empty() || s.front() == '+')
    return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size())
    return std::nullopt;
  return v;
}

constexpr std::string_view kNameRule =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

// ---- the selector string lexer and parser, token for token as k8s.io/apimachinery/pkg/labels.

enum class Token {
  kError,
  kEnd,
  kClosedPar,
  kComma,
  kDoesNotExist,
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

std::optional<Token> keywordToken(std::string_view s) {
  static constexpr std::pair<std::string_view, Token> kTokens[] = {
      {")", Token::kClosedPar},     {",", Token::kComma},    {"!", Token::kDoesNotExist},
      {"==", Token::kDoubleEquals}, {"=", Token::kEquals},   {">", Token::kGreaterThan},
      {"in", Token::kIn},           {"<", Token::kLessThan}, {"!=", Token::kNotEquals},
      {"notin", Token::kNotIn},     {"(", Token::kOpenPar},
  };
  for (const auto& [text, token] : kTokens) {
    if (s == text)
      return token;
  }
  return std::nullopt;
}

bool isWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool isSpecialSymbol(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

struct Item {
  Token token;
  std::string literal;
};

std::vector<Item> lex(std::string_view s) {
  std::vector<Item> items;
  std::size_t pos = 0;
  while (true) {
    while (pos < s.size() && isWhitespace(s[pos]))
      ++pos;
    if (pos >= s.size()) {
      items.push_back({Token::kEnd, ""});
      return items;
    }
    if (isSpecialSymbol(s[pos])) {
      // The longest run of symbols that is still a token: "!=" over "!", "==" over "=".
      std::size_t end = pos;
      std::optional<Token> last;
      std::size_t last_end = pos;
      while (end < s.size() && isSpecialSymbol(s[end])) {
        ++end;
        if (auto t = keywordToken(s.substr(pos, end - pos))) {
          last = t;
          last_end = end;
        } else if (last) {
          break;
        }
      }
      if (!last) {
        items.push_back({Token::kError, std::string(s.substr(pos, end - pos))});
        pos = end;
        continue;
      }
      items.push_back({*last, std::string(s.substr(pos, last_end - pos))});
      pos = last_end;
      continue;
    }
    std::size_t end = pos;
    while (end < s.size() && !isSpecialSymbol(s[end]) && !isWhitespace(s[end]))
      ++end;
    std::string word(s.substr(pos, end - pos));
    Token t = keywordToken(word).value_or(Token::kIdentifier);
    items.push_back({t, std::move(word)});
    pos = end;
  }
}

enum class Context { kKeyAndOperator, kValues };

class Parser {
 public:
  explicit Parser(std::string_view text) : items_(lex(text)) {}

  Expected<std::vector<Requirement>> parse() {
    std::vector<Requirement> requirements;
    while (true) {
      auto [tok, lit] = lookahead(Context::kValues);
      switch (tok) {
        case Token::kIdentifier:
        case Token::kDoesNotExist: {
          auto r = parseRequirement();
          if (!r)
            return makeKubeError("unable to parse requirement: " + r.error().message);
          requirements.push_back(std::move(*r));
          auto [t, l] = consume(Context::kValues);
          if (t == Token::kEnd)
            return requirements;
          if (t != Token::kComma) {
            return makeKubeError(fmt::format("found '{}', expected: ',' or 'end of string'", l));
          }
          auto [t2, l2] = lookahead(Context::kValues);
          if (t2 != Token::kIdentifier && t2 != Token::kDoesNotExist) {
            return makeKubeError(fmt::format("found '{}', expected: identifier after ','", l2));
          }
          break;
        }
        case Token::kEnd:
          return requirements;
        default:
          return makeKubeError(
              fmt::format("found '{}', expected: !, identifier, or 'end of string'", lit));
      }
    }
  }

 private:
  std::pair<Token, std::string> lookahead(Context context) const {
    const Item& item = items_[position_];
    return {adjust(item.token, context), item.literal};
  }

  std::pair<Token, std::string> consume(Context context) {
    const Item& item = items_[position_];
    // The kEnd item stays put so that reading past the end keeps answering "end of string".
    if (item.token != Token::kEnd)
      ++position_;
    return {adjust(item.token, context), item.literal};
  }

  // In a value position the keywords are ordinary words: `a in (in,notin)`.
  static Token adjust(Token t, Context context) {
    if (context == Context::kValues && (t == Token::kIn || t == Token::kNotIn)) {
      return Token::kIdentifier;
    }
    return t;
  }

  Expected<Requirement> parseRequirement() {
    std::optional<SelectorOperator> op;
    auto [tok, literal] = consume(Context::kValues);
    if (tok == Token::kDoesNotExist) {
      op = SelectorOperator::kDoesNotExist;
      std::tie(tok, literal) = consume(Context::kValues);
    }
    if (tok != Token::kIdentifier) {
      return makeKubeError(fmt::format("found '{}', expected: identifier", literal));
    }
    if (auto why = validateLabelKey(literal)) {
      return makeKubeError(fmt::format("invalid label key \"{}\": {}", literal, *why));
    }
    std::string key = std::move(literal);
    auto [next, next_literal] = lookahead(Context::kValues);
    if (op || next == Token::kEnd || next == Token::kComma) {
      return Requirement::make(std::move(key), op.value_or(SelectorOperator::kExists), {});
    }

    auto [op_tok, op_lit] = consume(Context::kKeyAndOperator);
    switch (op_tok) {
      case Token::kIn:
        op = SelectorOperator::kIn;
        break;
      case Token::kEquals:
        op = SelectorOperator::kEquals;
        break;
      case Token::kDoubleEquals:
        op = SelectorOperator::kDoubleEquals;
        break;
      case Token::kGreaterThan:
        op = SelectorOperator::kGreaterThan;
        break;
      case Token::kLessThan:
        op = SelectorOperator::kLessThan;
        break;
      case Token::kNotIn:
        op = SelectorOperator::kNotIn;
        break;
      case Token::kNotEquals:
        op = SelectorOperator::kNotEquals;
        break;
      default:
        return makeKubeError(
            fmt::format("found '{}', expected: in, notin, =, ==, !=, gt, lt", op_lit));
    }
    auto values = (*op == SelectorOperator::kIn || *op == SelectorOperator::kNotIn)
                      ? parseValues()
                      : parseExactValue();
    if (!values)
      return values.error();
    return Requirement::make(std::move(key), *op, std::move(*values));
  }

  Expected<std::vector<std::string>> parseValues() {
    auto [tok, lit] = consume(Context::kValues);
    if (tok != Token::kOpenPar)
      return makeKubeError(fmt::format("found '{}' expected: '('", lit));
    std::tie(tok, lit) = lookahead(Context::kValues);
    switch (tok) {
      case Token::kIdentifier:
      case Token::kComma: {
        auto list = parseIdentifiersList();
        if (!list)
          return list;
        if (consume(Context::kValues).first != Token::kClosedPar) {
          return makeKubeError(fmt::format("found '{}', expected: ')'", lit));
        }
        return list;
      }
      case Token::kClosedPar:
        consume(Context::kValues);
        return std::vector<std::string>{""};  // "()" is the empty value
      default:
        return makeKubeError(fmt::format("found '{}', expected: ',', ')' or identifier", lit));
    }
  }

  // Empty entries ("(,a)", "(a,)", "(a,,b)") stand for the empty value, as in Kubernetes.
  Expected<std::vector<std::string>> parseIdentifiersList() {
    std::vector<std::string> values;
    while (true) {
      auto [tok, lit] = consume(Context::kValues);
      if (tok == Token::kIdentifier) {
        values.push_back(std::move(lit));
        auto [tok2, lit2] = lookahead(Context::kValues);
        if (tok2 == Token::kComma)
          continue;
        if (tok2 == Token::kClosedPar)
          return values;
        return makeKubeError(fmt::format("found '{}', expected: ',' or ')'", lit2));
      }
      if (tok == Token::kComma) {
        if (values.empty())
          values.emplace_back();
        auto tok2 = lookahead(Context::kValues).first;
        if (tok2 == Token::kClosedPar) {
          values.emplace_back();
          return values;
        }
        if (tok2 == Token::kComma)
          values.emplace_back();
        continue;
      }
      return makeKubeError(fmt::format("found '{}', expected: ',', or identifier", lit));
    }
  }

  Expected<std::vector<std::string>> parseExactValue() {
    auto tok = lookahead(Context::kValues).first;
    if (tok == Token::kEnd || tok == Token::kComma)
      return std::vector<std::string>{""};
    auto [t, lit] = consume(Context::kValues);
    if (t == Token::kIdentifier)
      return std::vector<std::string>{std::move(lit)};
    return makeKubeError(fmt::format("found '{}', expected: identifier", lit));
  }

  std::vector<Item> items_;
  std::size_t position_ = 0;
};

}  // namespace

bool isDns1123Subdomain(std::string_view value) {
  if (value.empty() || value.size() > kMaxSubdomainLength)
    return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = value.find('.', start);
    if (!isDns1123Label(value.substr(start, dot - start)))
      return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

std::optional<std::string> validateLabelKey(std::string_view key) {
  std::string_view name = key;
  std::size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      return fmt::format(
          "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. "
          "'example.com/MyName')",
          kNameRule);
    }
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty())
      return std::string("prefix part must be non-empty");
    if (prefix.size() > kMaxSubdomainLength) {
      return fmt::format("prefix part must be no more than {} characters", kMaxSubdomainLength);
    }
    if (!isDns1123Subdomain(prefix)) {
      return std::string(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
          "characters, '-' or '.', and must start and end with an alphanumeric character");
    }
  }
  if (name.empty())
    return std::string("name part must be non-empty");
  if (name.size() > kMaxNameLength) {
    return fmt::format("name part must be no more than {} characters", kMaxNameLength);
  }
  if (!isQualifiedNamePart(name))
    return fmt::format("name part {}", kNameRule);
  return std::nullopt;
}

std::optional<std::string> validateLabelValue(std::string_view value) {
  if (value.empty())
    return std::nullopt;
  if (value.size() > kMaxNameLength) {
    return fmt::format("must be no more than {} characters", kMaxNameLength);
  }
  if (!isQualifiedNamePart(value))
    return fmt::format("a valid label {}", kNameRule);
  return std::nullopt;
}

std::string_view toString(SelectorOperator op) {
  switch (op) {
    case SelectorOperator::kIn:
      return "in";
    case SelectorOperator::kNotIn:
      return "notin";
    case SelectorOperator::kEquals:
      return "=";
    case SelectorOperator::kDoubleEquals:
      return "==";
    case SelectorOperator::kNotEquals:
      return "!=";
    case SelectorOperator::kExists:
      return "exists";
    case SelectorOperator::kDoesNotExist:
      return "!";
    case SelectorOperator::kGreaterThan:
      return "gt";
    case SelectorOperator::kLessThan:
      return "lt";
  }
  return "?";
}

std::string_view toString(LabelSelectorOperator op) {
  switch (op) {
    case LabelSelectorOperator::kIn:
      return "In";
    case LabelSelectorOperator::kNotIn:
      return "NotIn";
    case LabelSelectorOperator::kExists:
      return "Exists";
    case LabelSelectorOperator::kDoesNotExist:
      return "DoesNotExist";
  }
  return "?";
}

Requirement::Requirement(std::string key, SelectorOperator op, std::vector<std::string> values)
    : key_(std::move(key)), op_(op), values_(std::move(values)) {}

Expected<Requirement> Requirement::make(std::string key, SelectorOperator op,
                                        std::vector<std::string> values) {
  if (auto why = validateLabelKey(key)) {
    return makeKubeError(fmt::format("invalid label key \"{}\": {}", key, *why));
  }
  switch (op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (values.empty()) {
        return makeKubeError(
            fmt::format("key \"{}\": for 'in', 'notin' operators, values set can't be empty", key));
      }
      break;
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
    case SelectorOperator::kNotEquals:
      if (values.size() != 1) {
        return makeKubeError(
            fmt::format("key \"{}\": exact-match compatibility requires one single value", key));
      }
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!values.empty()) {
        return makeKubeError(
            fmt::format("key \"{}\": values set must be empty for exists and does not exist", key));
      }
      break;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan:
      if (values.size() != 1) {
        return makeKubeError(fmt::format(
            "key \"{}\": for 'Gt', 'Lt' operators, exactly one value is required", key));
      }
      if (!parseInt64(values[0])) {
        return makeKubeError(
            fmt::format("key \"{}\": for 'Gt', 'Lt' operators, the value must be an integer, "
                        "not \"{}\"",
                        key, values[0]));
      }
      break;
  }
  for (const auto& v : values) {
    if (auto why = validateLabelValue(v)) {
      return makeKubeError(
          fmt::format("invalid label value \"{}\" for key \"{}\": {}", v, key, *why));
    }
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return Requirement(std::move(key), op, std::move(values));
}

bool Requirement::matches(const Labels& labels) const {
  auto it = labels.find(key_);
  bool has = it != labels.end();
  auto contains = [&](const std::string& v) {
    return std::binary_search(values_.begin(), values_.end(), v);
  };
  switch (op_) {
    case SelectorOperator::kIn:
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
      return has && contains(it->second);
    case SelectorOperator::kNotIn:
    case SelectorOperator::kNotEquals:
      return !has || !contains(it->second);
    case SelectorOperator::kExists:
      return has;
    case SelectorOperator::kDoesNotExist:
      return !has;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan: {
      if (!has)
        return false;
      auto label_value = parseInt64(it->second);
      auto bound = parseInt64(values_.front());
      if (!label_value || !bound)
        return false;
      return op_ == SelectorOperator::kGreaterThan ? *label_value > *bound : *label_value < *bound;
    }
  }
  return false;
}

std::string Requirement::toString() const {
  std::string out;
  if (op_ == SelectorOperator::kDoesNotExist)
    out += '!';
  out += key_;
  auto join = [&] {
    for (std::size_t i = 0; i < values_.size(); ++i) {
      if (i > 0)
        out += ',';
      out += values_[i];
    }
  };
  switch (op_) {
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return out;
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      out += op_ == SelectorOperator::kIn ? " in (" : " notin (";
      join();
      out += ')';
      return out;
    case SelectorOperator::kEquals:
      out += '=';
      break;
    case SelectorOperator::kDoubleEquals:
      out += "==";
      break;
    case SelectorOperator::kNotEquals:
      out += "!=";
      break;
    case SelectorOperator::kGreaterThan:
      out += '>';
      break;
    case SelectorOperator::kLessThan:
      out += '<';
      break;
  }
  join();
  return out;
}

Selector Selector::nothing() {
  Selector s;
  s.nothing_ = true;
  return s;
}

Expected<Selector> Selector::parse(std::string_view text) {
  auto requirements = Parser(text).parse();
  if (!requirements)
    return requirements.error();
  Selector s;
  for (auto& r : *requirements)
    s.add(std::move(r));
  return s;
}

Selector Selector::fromSet(const Labels& set) {
  Selector s;
  for (const auto& [k, v] : set) {
    s.requirements_.push_back(Requirement(k, SelectorOperator::kEquals, {v}));
  }
  return s;
}

Selector& Selector::add(Requirement requirement) {
  // After any equal keys, so that requirements on one key keep their order (a stable sort).
  auto at =
      std::upper_bound(requirements_.begin(), requirements_.end(), requirement.key(),
                       [](const std::string& key, const Requirement& r) { return key < r.key(); });
  requirements_.insert(at, std::move(requirement));
  return *this;
}

bool Selector::matches(const Labels& labels) const {
  if (nothing_)
    return false;
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return r.matches(labels); });
}

std::string Selector::toString() const {
  std::string out;
  for (std::size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0)
      out += ',';
    out += requirements_[i].toString();
  }
  return out;
}

Expected<Selector> toSelector(const LabelSelector* selector) {
  if (selector == nullptr)
    return Selector::nothing();
  Selector s;
  for (const auto& [k, v] : selector->match_labels) {
    auto r = Requirement::make(k, SelectorOperator::kEquals, {v});
    if (!r)
      return makeKubeError("matchLabels: " + r.error().message);
    s.add(std::move(*r));
  }
  for (std::size_t i = 0; i < selector->match_expressions.size(); ++i) {
    const auto& e = selector->match_expressions[i];
    SelectorOperator op = SelectorOperator::kIn;
    switch (e.op) {
      case LabelSelectorOperator::kIn:
        op = SelectorOperator::kIn;
        break;
      case LabelSelectorOperator::kNotIn:
        op = SelectorOperator::kNotIn;
        break;
      case LabelSelectorOperator::kExists:
        op = SelectorOperator::kExists;
        break;
      case LabelSelectorOperator::kDoesNotExist:
        op = SelectorOperator::kDoesNotExist;
        break;
    }
    auto r = Requirement::make(e.key, op, e.values);
    if (!r)
      return makeKubeError(fmt::format("matchExpressions[{}]: {}", i, r.error().message));
    s.add(std::move(*r));
  }
  return s;
}

}  // namespace koord::kube
