#include "koord/kube/quantity.h"

#include <boost/multiprecision/cpp_int.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace koord::kube {
namespace {

using detail::Int128;
using BigInt = boost::multiprecision::cpp_int;
__extension__ typedef unsigned __int128 UInt128;

constexpr Int128 pow10(int n) {
  Int128 r = 1;
  for (int i = 0; i < n; ++i)
    r *= 10;
  return r;
}

constexpr Int128 kNanosPerUnit = pow10(9);
// Exclusive bound: |value| < 10^21 units.
constexpr Int128 kLimitNanos = pow10(30);
// Kubernetes caps BinarySI input at max int64 units.
constexpr Int128 kBinaryCapNanos = Int128{std::numeric_limits<std::int64_t>::max()} * kNanosPerUnit;

// cpp_int and __int128 meet only through these two helpers, keeping the conversion explicit.
BigInt toBig(Int128 v) {
  bool negative = v < 0;
  auto magnitude = static_cast<UInt128>(negative ? -v : v);
  BigInt r = static_cast<std::uint64_t>(magnitude >> 64);
  r <<= 64;
  r += static_cast<std::uint64_t>(magnitude);
  return negative ? BigInt(-r) : r;
}

// Only for 0 <= v < 2^126, which the callers have checked.
Int128 fromBig(const BigInt& v) {
  auto hi = static_cast<std::uint64_t>(v >> 64);
  auto lo = static_cast<std::uint64_t>(v & std::numeric_limits<std::uint64_t>::max());
  return static_cast<Int128>((static_cast<UInt128>(hi) << 64) | lo);
}

constexpr std::string_view kFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

struct SuffixInfo {
  int base;      // 10 or 2
  int exponent;  // power of base
  Quantity::Format format;
};

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

std::optional<SuffixInfo> interpretSuffix(std::string_view s) {
  using F = Quantity::Format;
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal{{{"n", -9},
                                                                              {"u", -6},
                                                                              {"m", -3},
                                                                              {"", 0},
                                                                              {"k", 3},
                                                                              {"M", 6},
                                                                              {"G", 9},
                                                                              {"T", 12},
                                                                              {"P", 15},
                                                                              {"E", 18}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary{
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  for (const auto& [name, e] : kDecimal) {
    if (s == name)
      return SuffixInfo{10, e, F::kDecimalSI};
  }
  for (const auto& [name, e] : kBinary) {
    if (s == name)
      return SuffixInfo{2, e, F::kBinarySI};
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    // Go's strconv.ParseInt: an optional sign, then digits only.
    std::string_view digits = s.substr(1);
    bool negative = false;
    if (digits[0] == '+' || digits[0] == '-') {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), isDigit))
      return std::nullopt;
    std::int32_t e = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), e);
    // Kubernetes reads 64 bits and then truncates to 32; an exponent that large is refused here.
    if (ec != std::errc{} || ptr != digits.data() + digits.size())
      return std::nullopt;
    return SuffixInfo{10, negative ? -e : e, F::kDecimalExponent};
  }
  return std::nullopt;
}

std::string int128ToString(Int128 v) {
  if (v == 0)
    return "0";
  bool negative = v < 0;
  // |v| never reaches the int128 minimum: quantities stay below 10^32.
  if (negative)
    v = -v;
  std::string out;
  while (v > 0) {
    out.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  if (negative)
    out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

Int128 absValue(Int128 v) {
  return v < 0 ? -v : v;
}

// Divides rounding away from zero, as Kubernetes' RoundUp does for negative amounts.
Int128 divAwayFromZero(Int128 n, Int128 d) {
  Int128 q = n / d;
  if (n % d != 0)
    q += n < 0 ? -1 : 1;
  return q;
}

std::int64_t saturate(Int128 v) {
  if (v > std::numeric_limits<std::int64_t>::max())
    return std::numeric_limits<std::int64_t>::max();
  if (v < std::numeric_limits<std::int64_t>::min())
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

}  // namespace

Expected<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty())
    return makeKubeError(std::string(kFormatError));
  if (text.size() > kMaxLength) {
    return makeKubeError(fmt::format("quantity {:?}... is {} characters, more than {}",
                                     text.substr(0, 32), text.size(), kMaxLength));
  }
  if (text == "0")
    return Quantity{};

  std::size_t pos = 0;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    ++pos;
  }
  std::size_t num_begin = pos;
  while (pos < text.size() && isDigit(text[pos]))
    ++pos;
  std::string_view num = text.substr(num_begin, pos - num_begin);
  std::string_view denom;
  if (pos < text.size() && text[pos] == '.') {
    std::size_t denom_begin = ++pos;
    while (pos < text.size() && isDigit(text[pos]))
      ++pos;
    denom = text.substr(denom_begin, pos - denom_begin);
  }
  if (num.empty() && denom.empty())
    return makeKubeError(std::string(kFormatError));

  // The suffix as Kubernetes scans it: letters from its alphabet, an optional sign, digits.
  std::size_t suffix_begin = pos;
  while (pos < text.size() &&
         std::string_view("eEinumkKMGTP").find(text[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
    ++pos;
  while (pos < text.size() && isDigit(text[pos]))
    ++pos;
  if (pos != text.size())
    return makeKubeError(std::string(kFormatError));
  std::string_view suffix = text.substr(suffix_begin);

  auto info = interpretSuffix(suffix);
  if (!info)
    return makeKubeError(fmt::format("unable to parse quantity's suffix {:?}", suffix));

  // Significant digits D and exponents so that |value| = D * 10^e10 * 2^e2.
  std::string digits;
  digits.reserve(num.size() + denom.size());
  digits.append(num);
  digits.append(denom);
  std::size_t first = digits.find_first_not_of('0');
  Format format = info->format;
  if (first == std::string::npos)
    return Quantity{0, format};
  std::size_t last = digits.find_last_not_of('0');
  std::int64_t e10 = (info->base == 10 ? info->exponent : 0) -
                     static_cast<std::int64_t>(denom.size()) +
                     static_cast<std::int64_t>(digits.size() - 1 - last);
  int e2 = info->base == 2 ? info->exponent : 0;
  std::string_view significant = std::string_view(digits).substr(first, last - first + 1);
  auto len = static_cast<std::int64_t>(significant.size());

  // nanos = ceil(D * 10^(e10 + 9) * 2^e2), with the powers bounded before they are built.
  std::int64_t shift = e10 + 9;
  BigInt nanos;
  bool huge = false;
  if (shift >= 0) {
    if (len + shift > 32) {
      huge = true;
    } else {
      nanos = BigInt(std::string(significant));
      nanos *= boost::multiprecision::pow(BigInt(10), static_cast<unsigned>(shift));
      nanos <<= e2;
    }
  } else if (-shift > len + 25) {
    // D * 2^60 < 10^(len + 19): far below one nanounit, which is the least non-zero amount.
    nanos = 1;
  } else {
    BigInt numerator = BigInt(std::string(significant)) << e2;
    BigInt denominator = boost::multiprecision::pow(BigInt(10), static_cast<unsigned>(-shift));
    nanos = (numerator + denominator - 1) / denominator;
  }

  Int128 result = 0;
  if (format == Format::kBinarySI && (huge || nanos > toBig(kBinaryCapNanos))) {
    result = kBinaryCapNanos;
  } else if (huge || nanos >= toBig(kLimitNanos)) {
    return makeKubeError(fmt::format("quantity {:?} is too large (the limit is {})", text, kLimit));
  } else {
    result = fromBig(nanos);
  }
  // A fraction of one cannot be written with a binary suffix.
  if (format == Format::kBinarySI && result < kNanosPerUnit)
    format = Format::kDecimalSI;
  return Quantity{negative ? -result : result, format};
}

Quantity Quantity::fromInt(std::int64_t value, Format format) {
  return Quantity{Int128{value} * kNanosPerUnit, format};
}

Quantity Quantity::fromMilli(std::int64_t milli, Format format) {
  return Quantity{Int128{milli} * 1'000'000, format};
}

Quantity Quantity::fromScaled(std::int64_t value, int scale, Format format) {
  if (scale < -9) {
    if (scale < -40) {
      return Quantity{value == 0 ? 0 : (value < 0 ? -1 : 1), format};
    }
    return Quantity{divAwayFromZero(Int128{value}, pow10(-9 - scale)), format};
  }
  if (value == 0)
    return Quantity{0, format};
  // Checked before multiplying: int64 * 10^29 would overflow even 128 bits.
  if (scale > 20 || absValue(Int128{value}) >= kLimitNanos / pow10(scale + 9)) {
    throw std::out_of_range("Quantity::fromScaled: beyond 1000E");
  }
  return Quantity{Int128{value} * pow10(scale + 9), format};
}

std::int64_t Quantity::scaledValue(int scale) const {
  int shift = scale + 9;
  if (shift >= 0) {
    if (shift > 38)
      return sign();
    return saturate(divAwayFromZero(nanos_, pow10(shift)));
  }
  if (nanos_ == 0)
    return 0;
  // Past int64 anyway once |nanos| * 10^-shift exceeds 10^19; checked before multiplying.
  if (-shift > 19 || absValue(nanos_) > pow10(19 + shift)) {
    return nanos_ < 0 ? std::numeric_limits<std::int64_t>::min()
                      : std::numeric_limits<std::int64_t>::max();
  }
  return saturate(nanos_ * pow10(-shift));
}

double Quantity::approximateDouble() const {
  return static_cast<double>(nanos_) / 1e9;
}

std::string Quantity::toString() const {
  if (nanos_ == 0)
    return "0";
  Format format = format_;
  if (format == Format::kBinarySI &&
      (absValue(nanos_) < 1024 * kNanosPerUnit || nanos_ % kNanosPerUnit != 0)) {
    // Kubernetes avoids rounding (and confusion) by printing these in decimal.
    format = Format::kDecimalSI;
  }
  if (format == Format::kBinarySI) {
    static constexpr std::array<std::string_view, 7> kBinary{"",   "Ki", "Mi", "Gi",
                                                             "Ti", "Pi", "Ei"};
    Int128 units = nanos_ / kNanosPerUnit;
    std::size_t exponent = 0;
    while (absValue(units) >= 1024 && units % 1024 == 0 && exponent + 1 < kBinary.size()) {
      units /= 1024;
      ++exponent;
    }
    return int128ToString(units) + std::string(kBinary[exponent]);
  }
  Int128 mantissa = nanos_;
  int exponent = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  while (exponent % 3 != 0) {
    mantissa *= 10;
    --exponent;
  }
  std::string out = int128ToString(mantissa);
  if (format == Format::kDecimalExponent) {
    if (exponent != 0)
      out += fmt::format("e{}", exponent);
    return out;
  }
  static constexpr std::array<std::string_view, 10> kDecimal{"n", "u", "m", "",  "k",
                                                             "M", "G", "T", "P", "E"};
  // |value| < 10^21 keeps the exponent within n..E.
  out += kDecimal[static_cast<std::size_t>((exponent + 9) / 3)];
  return out;
}

bool Quantity::add(const Quantity& y) {
  Int128 sum = nanos_ + y.nanos_;
  if (absValue(sum) >= kLimitNanos)
    return false;
  if (nanos_ == 0)
    format_ = y.format_;
  nanos_ = sum;
  return true;
}

bool Quantity::sub(const Quantity& y) {
  Int128 diff = nanos_ - y.nanos_;
  if (absValue(diff) >= kLimitNanos)
    return false;
  if (nanos_ == 0)
    format_ = y.format_;
  nanos_ = diff;
  return true;
}

Quantity operator+(Quantity a, const Quantity& b) {
  if (!a.add(b))
    throw std::overflow_error("Quantity: sum beyond 1000E");
  return a;
}

Quantity operator-(Quantity a, const Quantity& b) {
  if (!a.sub(b))
    throw std::overflow_error("Quantity: difference beyond 1000E");
  return a;
}

}  // namespace koord::kube
