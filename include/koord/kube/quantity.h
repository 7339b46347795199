// Kubernetes' resource.Quantity ("500m", "1536Mi", "1e3"): parsed, compared, summed and printed
// exactly as k8s.io/apimachinery does, so requests and capacities never drift through floats.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::kube {

namespace detail {
// 128 bits of nanounits hold every value Kubernetes can print with an SI suffix (|v| < 1000E)
// at full nano precision, so no value needs a slow arbitrary-precision path.
__extension__ typedef __int128 Int128;
}  // namespace detail

class Quantity {
 public:
  /// Remembered from the input so that String() answers in the same family of suffixes.
  enum class Format : std::uint8_t {
    kDecimalSI,        // 12M, 500m
    kBinarySI,         // 12Mi
    kDecimalExponent,  // 12e6
  };

  /// The largest magnitude, exclusive: 10^21 (1000E). Kubernetes keeps larger values in a
  /// big decimal but cannot print them with a suffix; koord refuses them instead.
  static constexpr std::string_view kLimit = "1000E";

  /// The longest text parse() reads. Every value below kLimit, at full nano precision, is
  /// written in under 40 characters (sign, 21 integer and 9 fraction digits, point, suffix), so
  /// this leaves room for padding zeros and long exponents while keeping the big-number work on
  /// untrusted input (pod specs, annotations) trivial; apimachinery has no bound, and a
  /// multi-megabyte digit string costs seconds there.
  static constexpr std::size_t kMaxLength = 128;

  /// Zero, DecimalSI.
  Quantity() = default;

  /// Kubernetes' grammar: <sign><digits>[.<digits>]<suffix>, suffix one of Ki Mi Gi Ti Pi Ei,
  /// n u m "" k M G T P E, or e/E followed by a signed integer. ".5" and "1." are accepted as
  /// Kubernetes accepts them. Sub-nano precision rounds up (away from zero); BinarySI values
  /// above 2^63-1 are capped there, as Kubernetes does. Refused, where Kubernetes would parse
  /// them as zero: a number with no digit at all ("Mi", ".", "+"). Refused where Kubernetes
  /// would accept it: text longer than kMaxLength.
  static Expected<Quantity> parse(std::string_view text);

  static Quantity fromInt(std::int64_t value, Format format = Format::kDecimalSI);
  static Quantity fromMilli(std::int64_t milli, Format format = Format::kDecimalSI);
  /// value * 10^scale; scales below -9 round up to whole nanounits. Throws std::out_of_range
  /// when the product is beyond kLimit (a programmer error: scale comes from code, not input).
  static Quantity fromScaled(std::int64_t value, int scale, Format format = Format::kDecimalSI);

  /// ceil(q), rounding away from zero, saturated to the int64 range.
  std::int64_t value() const { return scaledValue(0); }
  /// ceil(q * 1000), rounding away from zero, saturated to the int64 range.
  std::int64_t milliValue() const { return scaledValue(-3); }
  /// ceil(q / 10^scale), rounding away from zero, saturated to the int64 range.
  std::int64_t scaledValue(int scale) const;
  /// For scores and ratios only; never feed it back into a Quantity.
  double approximateDouble() const;

  Format format() const { return format_; }
  void setFormat(Format format) { format_ = format; }
  bool isZero() const { return nanos_ == 0; }
  int sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }

  /// The canonical form Kubernetes serialises: the largest suffix that loses no precision,
  /// no fractional digits ("1.5" -> "1500m", "1.5Gi" -> "1536Mi", "1e3" -> "1e3").
  std::string toString() const;

  /// In place; a zero left-hand side takes y's format, as in Kubernetes. False, and nothing
  /// changed, when the result would reach kLimit.
  [[nodiscard]] bool add(const Quantity& y);
  [[nodiscard]] bool sub(const Quantity& y);
  void neg() { nanos_ = -nanos_; }

  /// Value order; the format plays no part (Kubernetes' Cmp and Equal).
  int cmp(const Quantity& y) const { return nanos_ < y.nanos_ ? -1 : (nanos_ > y.nanos_ ? 1 : 0); }
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.cmp(b) <=> 0;
  }
  /// Throw std::overflow_error at kLimit; use add()/sub() where the operands are untrusted.
  friend Quantity operator+(Quantity a, const Quantity& b);
  friend Quantity operator-(Quantity a, const Quantity& b);
  Quantity operator-() const {
    Quantity q = *this;
    q.neg();
    return q;
  }

 private:
  Quantity(detail::Int128 nanos, Format format) : nanos_(nanos), format_(format) {}

  detail::Int128 nanos_ = 0;
  Format format_ = Format::kDecimalSI;
};

/// A resource name -> amount map (requests, limits, capacity, allocatable).
using ResourceList = std::map<std::string, Quantity, std::less<>>;

}  // namespace koord::kube
