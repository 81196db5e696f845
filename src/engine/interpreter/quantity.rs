//! Kubernetes resource quantities (`500m`, `2Gi`, `1.5e3`) as apimachinery's
//! `resource.Quantity` holds them, for the `kube` library Karmada gives its scripts: read with
//! its grammar and rounding (up to the nano), added, scaled to whole or milli units, written in
//! its canonical text (`1500m`, `3Gi`, `1536Mi`) and approximated as a float, with the same
//! two inner forms (a small integer at a power of ten, or an exact decimal), since the float
//! approximation and the scaled values depend on which one a quantity is in. It must not know
//! about pods, resources or scripts.

use num_bigint::{BigInt, Sign};
use num_traits::{Signed, ToPrimitive, Zero};

/// How a quantity writes itself, from the suffix it was read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `e3`, `E-6`.
    DecimalExponent,
    /// `Ki`, `Mi`, … `Ei`.
    BinarySI,
    /// `m`, `k`, `M`, … and no suffix.
    DecimalSI,
    /// A quantity never given one (Go's zero value): written as `DecimalExponent`.
    Unset,
}

/// Why a text is not a quantity, in apimachinery's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// A quantity: `unscaled × 10^exponent` in one of apimachinery's two forms.
#[derive(Debug, Clone)]
pub struct Quantity {
    unscaled: BigInt,
    exponent: i32,
    /// Go's `inf.Dec` form; otherwise the `int64Amount` form, whose `unscaled` fits an i64.
    decimal: bool,
    pub format: Format,
    /// The text it was read from, where apimachinery keeps it (text already in canonical
    /// form); anything that changes the value forgets it.
    text: Option<String>,
}

/// The most digits an i64 always holds.
const MAX_INT64_FACTORS: i32 = 18;
const NANO: i32 = -9;

impl Quantity {
    /// Go's `Quantity{}`: zero, no format.
    pub fn zero() -> Quantity {
        Quantity::int(0, 0, Format::Unset)
    }

    fn int(value: i64, exponent: i32, format: Format) -> Quantity {
        Quantity {
            unscaled: BigInt::from(value),
            exponent,
            decimal: false,
            format,
            text: None,
        }
    }

    /// `resource.NewQuantity(value, format)`.
    pub fn whole(value: i64, format: Format) -> Quantity {
        Quantity::int(value, 0, format)
    }

    /// `resource.NewMilliQuantity(value, format)`.
    pub fn milli(value: i64, format: Format) -> Quantity {
        Quantity::int(value, -3, format)
    }

    /// `resource.ParseQuantity`.
    pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
        if text.is_empty() {
            return Err(QuantityError::Format);
        }
        if text == "0" {
            return Ok(Quantity::int(0, 0, Format::DecimalSI));
        }
        let parts = split(text)?;
        let (base, exponent, format) = interpret(parts.suffix).ok_or(QuantityError::Suffix)?;
        let digits = (parts.num.len() + parts.denom.len()) as i32;
        let mut mantissa: i64 = 1;
        let (mut scale, precision) = match format {
            Format::BinarySI => {
                if exponent >= 0 && parts.denom.is_empty() {
                    mantissa = 1i64.checked_shl(exponent as u32).unwrap_or(0);
                    let shifted = (exponent as f32 * 3.0 / 10.0) as i32;
                    (0, 15 - parts.num.len() as i32 - shifted - 1)
                } else {
                    (0, -1)
                }
            }
            _ => (exponent, MAX_INT64_FACTORS - digits),
        };
        if precision >= 0 {
            scale -= parts.denom.len() as i32;
            if scale >= NANO {
                let shifted = format!("{}{}", parts.num, parts.denom);
                let value: i64 = shifted.parse().map_err(|_| QuantityError::Numeric)?;
                if let Some(result) = value.checked_mul(mantissa) {
                    let result = if parts.positive { result } else { -result };
                    let mut quantity = Quantity::int(result, scale, format);
                    let canonical = match format {
                        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => {
                            scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                        }
                    };
                    if canonical {
                        quantity.text = Some(text.to_string());
                    }
                    return Ok(quantity);
                }
            }
        }
        // The exact decimal form: the number as written, times the suffix, rounded up to
        // the nano.
        if !parts.digits {
            return Err(QuantityError::Numeric);
        }
        let mut unscaled: BigInt = format!("{}{}", parts.num, parts.denom)
            .parse()
            .map_err(|_| QuantityError::Numeric)?;
        let mut dec_exponent = -(parts.denom.len() as i32);
        if base == 10 {
            dec_exponent += exponent;
        } else {
            unscaled <<= exponent.max(0) as usize;
        }
        let mut format = format;
        if !unscaled.is_zero() {
            (unscaled, dec_exponent) = round_up(unscaled, dec_exponent, NANO);
        }
        let mut quantity = Quantity {
            unscaled,
            exponent: dec_exponent,
            decimal: true,
            format,
            text: None,
        };
        if format == Format::BinarySI && quantity.cmp_int(i64::MAX).is_gt() {
            quantity.unscaled = BigInt::from(i64::MAX);
            quantity.exponent = 0;
        }
        if format == Format::BinarySI
            && quantity.cmp_int(1).is_lt()
            && quantity.unscaled.sign() == Sign::Plus
        {
            format = Format::DecimalSI;
        }
        quantity.format = format;
        if !parts.positive {
            quantity.unscaled = -quantity.unscaled;
        }
        Ok(quantity)
    }

    pub fn is_zero(&self) -> bool {
        self.unscaled.is_zero()
    }

    /// `Quantity.Add`: the sum; a zero quantity takes the other's format.
    pub fn add(&mut self, other: &Quantity) {
        self.text = None;
        if !self.decimal && !other.decimal {
            if self.unscaled.is_zero() {
                self.format = other.format;
            }
            if let Some((value, exponent)) = int_add(self.as_int(), other.as_int()) {
                self.unscaled = BigInt::from(value);
                self.exponent = exponent;
                return;
            }
        } else if self.is_zero() {
            self.format = other.format;
        }
        let exponent = self.exponent.min(other.exponent);
        let sum = rescale(&self.unscaled, self.exponent, exponent)
            + rescale(&other.unscaled, other.exponent, exponent);
        self.unscaled = sum;
        self.exponent = exponent;
        self.decimal = true;
    }

    fn as_int(&self) -> (i64, i32) {
        (self.unscaled.to_i64().unwrap_or(0), self.exponent)
    }

    /// The exact comparison of two values (`Quantity.Cmp`), whatever their forms.
    pub fn cmp_value(&self, other: &Quantity) -> std::cmp::Ordering {
        let exponent = self.exponent.min(other.exponent);
        rescale(&self.unscaled, self.exponent, exponent).cmp(&rescale(
            &other.unscaled,
            other.exponent,
            exponent,
        ))
    }

    fn cmp_int(&self, value: i64) -> std::cmp::Ordering {
        self.cmp_value(&Quantity::whole(value, Format::DecimalSI))
    }

    /// `Quantity.ScaledValue(scale)`: the value in units of `10^scale`, rounded up, as Go
    /// computes it in each form (an int form that overflows gives 0; the decimal form wraps).
    pub fn scaled_value(&self, scale: i32) -> i64 {
        if !self.decimal {
            let (value, exponent) = self.as_int();
            if exponent < scale {
                return negative_scale(value, (scale - exponent) as u32);
            }
            return positive_scale(value, (exponent - scale) as u32).0;
        }
        let difference = i64::from(scale) - i64::from(self.exponent);
        if difference == 0 {
            return low_i64(&self.unscaled);
        }
        if difference < 0 {
            let factor = go_float_to_int(go_pow10((-difference) as i32));
            return low_i64(&self.unscaled).wrapping_mul(factor);
        }
        // Go divides in 64 bits where it can (truncating), else with big.Int's DivMod
        // (rounding toward minus infinity); either way one more when anything is left.
        if self.unscaled < BigInt::from(i64::MAX) && difference < 19 {
            let value = low_i64(&self.unscaled);
            let divisor = 10i64.pow(difference as u32);
            let quotient = value.wrapping_div(divisor);
            return if value.wrapping_rem(divisor) != 0 {
                quotient.wrapping_add(1)
            } else {
                quotient
            };
        }
        let divisor = num_traits::pow(BigInt::from(10), difference as usize);
        let mut quotient = &self.unscaled / &divisor;
        let remainder = &self.unscaled % &divisor;
        if remainder.sign() == Sign::Minus {
            quotient -= 1;
        }
        let quotient = low_i64(&quotient);
        if remainder.is_zero() {
            quotient
        } else {
            quotient.wrapping_add(1)
        }
    }

    /// `Quantity.Value()`: whole units, rounded up.
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// `Quantity.MilliValue()`: thousandths, rounded up.
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }

    /// `Quantity.AsApproximateFloat64()`: the unscaled value times a power of ten, in Go's
    /// float arithmetic.
    pub fn approximate_f64(&self) -> f64 {
        let base = self.unscaled.to_f64().unwrap_or(f64::NAN);
        if self.exponent == 0 {
            return base;
        }
        base * go_pow10(self.exponent)
    }

    /// `Quantity.String()`: the text it was read from where that is kept, else
    /// [`Quantity::canonical`].
    pub fn text(&self) -> String {
        self.text.clone().unwrap_or_else(|| self.canonical())
    }

    /// The canonical text (`CanonicalizeBytes`), as `MarshalJSON` writes a new quantity.
    pub fn canonical(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let mut format = match self.format {
            Format::Unset => Format::DecimalExponent,
            other => other,
        };
        let mut whole = None;
        if format == Format::BinarySI {
            if self.cmp_int(-1024).is_gt() && self.cmp_int(1024).is_lt() {
                format = Format::DecimalSI;
            } else {
                let (rounded, exact) = self.rounded_to_whole();
                if exact {
                    whole = Some(rounded);
                } else {
                    format = Format::DecimalSI;
                }
            }
        }
        match whole {
            Some(mut amount) => {
                let mut times = 0;
                let step = BigInt::from(1024);
                while !amount.is_zero() && (&amount % &step).is_zero() {
                    amount /= &step;
                    times += 1;
                }
                let suffix = match times {
                    1 => "Ki",
                    2 => "Mi",
                    3 => "Gi",
                    4 => "Ti",
                    5 => "Pi",
                    6 => "Ei",
                    _ => "",
                };
                format!("{amount}{suffix}")
            }
            None => {
                let mut amount = self.unscaled.clone();
                let mut exponent = self.exponent;
                let ten = BigInt::from(10);
                while !amount.is_zero() && (&amount % &ten).is_zero() {
                    amount /= &ten;
                    exponent += 1;
                }
                while exponent % 3 != 0 {
                    amount *= &ten;
                    exponent -= 1;
                }
                let suffix = match format {
                    Format::DecimalExponent if exponent == 0 => String::new(),
                    Format::DecimalExponent => format!("e{exponent}"),
                    _ => match exponent {
                        -9 => "n",
                        -6 => "u",
                        -3 => "m",
                        3 => "k",
                        6 => "M",
                        9 => "G",
                        12 => "T",
                        15 => "P",
                        18 => "E",
                        _ => "",
                    }
                    .to_string(),
                };
                format!("{amount}{suffix}")
            }
        }
    }

    /// `AsScale(0)`: the value rounded away from zero to a whole number, and whether that
    /// was exact.
    fn rounded_to_whole(&self) -> (BigInt, bool) {
        if self.exponent >= 0 {
            return (rescale(&self.unscaled, self.exponent, 0), true);
        }
        let divisor = num_traits::pow(BigInt::from(10), (-self.exponent) as usize);
        let magnitude = self.unscaled.abs();
        let quotient = &magnitude / &divisor;
        let exact = (&magnitude % &divisor).is_zero();
        let quotient = if exact { quotient } else { quotient + 1 };
        let signed = if self.unscaled.sign() == Sign::Minus {
            -quotient
        } else {
            quotient
        };
        (signed, exact)
    }
}

impl PartialEq for Quantity {
    /// `Quantity.Equal`: the same value, whatever its form or format.
    fn eq(&self, other: &Quantity) -> bool {
        self.cmp_value(other).is_eq()
    }
}

/// The parts of a quantity's text (`parseQuantityString`).
struct Parts<'a> {
    positive: bool,
    /// Whether any digit comes before the suffix (the exact form needs one).
    digits: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn split(text: &str) -> Result<Parts<'_>, QuantityError> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    let zero = Parts {
        positive,
        digits: true,
        num: "0",
        denom: "",
        suffix: "",
    };
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(zero);
    }
    let start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let mut num = &text[start..pos];
    if pos >= end {
        return Ok(Parts { num, ..zero });
    }
    if num.is_empty() {
        num = "0";
    }
    let mut denom = "";
    if bytes[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &text[start..pos];
        if pos >= end {
            return Ok(Parts { num, denom, ..zero });
        }
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format);
    }
    Ok(Parts {
        positive,
        digits: bytes[..suffix_start].iter().any(u8::is_ascii_digit),
        num,
        denom,
        suffix: &text[suffix_start..],
    })
}

/// A suffix's base, exponent and format (`quantitySuffixer.interpret`).
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |exponent| Some((10, exponent, Format::DecimalSI));
    let binary = |exponent| Some((2, exponent, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ if suffix.len() > 1 && suffix.starts_with(['e', 'E']) => {
            // Go's ParseInt takes a sign; the exponent is then truncated to 32 bits.
            let parsed: i64 = suffix[1..].parse().ok()?;
            Some((10, parsed as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

/// `unscaled × 10^from` written at `10^to` (`to <= from`).
fn rescale(unscaled: &BigInt, from: i32, to: i32) -> BigInt {
    if from <= to {
        return unscaled.clone();
    }
    unscaled * num_traits::pow(BigInt::from(10), (from - to) as usize)
}

/// `inf.Dec.Round(…, scale, RoundUp)` for the exponent `to`: fewer digits rounded away from
/// zero, more digits added as zeros.
fn round_up(unscaled: BigInt, exponent: i32, to: i32) -> (BigInt, i32) {
    if exponent >= to {
        return (rescale(&unscaled, exponent, to), to);
    }
    let divisor = num_traits::pow(BigInt::from(10), (to - exponent) as usize);
    let magnitude = unscaled.abs();
    let mut quotient = &magnitude / &divisor;
    if !(&magnitude % &divisor).is_zero() {
        quotient += 1;
    }
    let signed = if unscaled.sign() == Sign::Minus {
        -quotient
    } else {
        quotient
    };
    (signed, to)
}

/// `int64Amount.Add`, `None` where Go's overflows into the decimal form.
fn int_add((a, a_scale): (i64, i32), (b, b_scale): (i64, i32)) -> Option<(i64, i32)> {
    if b == 0 {
        return Some((a, a_scale));
    }
    if a == 0 {
        return Some((b, b_scale));
    }
    if a_scale == b_scale {
        return Some((a.checked_add(b)?, a_scale));
    }
    let fits = |(value, ok): (i64, bool)| ok.then_some(value);
    if a_scale > b_scale {
        let a = fits(positive_scale(a, (a_scale - b_scale) as u32))?;
        return Some((a.checked_add(b)?, b_scale));
    }
    let b = fits(positive_scale(b, (b_scale - a_scale) as u32))?;
    Some((a.checked_add(b)?, a_scale))
}

/// `positiveScaleInt64`: `value × 10^scale` and whether it fits. As Go's, a power it
/// multiplies by at once (10, 100, 1000, 10⁶, 10⁹) gives the wrapped product when it does not
/// fit; any other gives 0.
fn positive_scale(value: i64, scale: u32) -> (i64, bool) {
    let times = |a: i64, b: i64| -> (i64, bool) {
        if a == 0 || a == 1 {
            return (a.wrapping_mul(b), true);
        }
        if a == i64::MIN {
            return (0, false);
        }
        let c = a.wrapping_mul(b);
        (c, c / b == a)
    };
    match scale {
        0 => (value, true),
        1 => times(value, 10),
        2 => times(value, 100),
        3 => times(value, 1000),
        6 => times(value, 1_000_000),
        9 => times(value, 1_000_000_000),
        _ => {
            let mut value = value;
            for _ in 0..scale {
                let (next, ok) = times(value, 10);
                if !ok {
                    return (0, false);
                }
                value = next;
            }
            (value, true)
        }
    }
}

/// `negativeScaleInt64`: `value / 10^scale`, rounded away from zero.
fn negative_scale(base: i64, scale: u32) -> i64 {
    let mut value = base;
    let mut fraction = false;
    for _ in 0..scale {
        if !fraction && value % 10 != 0 {
            fraction = true;
        }
        value /= 10;
        if value == 0 {
            return match (fraction, base > 0) {
                (false, _) => 0,
                (true, true) => 1,
                (true, false) => -1,
            };
        }
    }
    match (fraction, base > 0) {
        (false, _) => value,
        (true, true) => value + 1,
        (true, false) => value - 1,
    }
}

/// Go's `big.Int.Int64()`: the low 64 bits of the magnitude, signed.
fn low_i64(value: &BigInt) -> i64 {
    let (sign, digits) = value.to_u64_digits();
    let low = digits.first().copied().unwrap_or(0) as i64;
    if sign == Sign::Minus {
        low.wrapping_neg()
    } else {
        low
    }
}

/// Go's `int64(f)` on amd64: out of range is the most negative integer.
fn go_float_to_int(value: f64) -> i64 {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&value) {
        value as i64
    } else {
        i64::MIN
    }
}

/// Go's `math.Pow10`, built from the same exact powers the same way, so products round as
/// Go's do.
fn go_pow10(n: i32) -> f64 {
    let power = |k: i32| -> f64 { format!("1e{k}").parse().unwrap_or(f64::NAN) };
    if (0..=308).contains(&n) {
        return power(n / 32 * 32) * power(n % 32);
    }
    if (-323..=0).contains(&n) {
        let m = -n;
        return power(-(m / 32 * 32)) / power(m % 32);
    }
    if n > 0 { f64::INFINITY } else { 0.0 }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Quantity::parse(text).map_or_else(
            |e| e.to_string(),
            |q| {
                let mut sum = Quantity::zero();
                sum.add(&q);
                sum.canonical()
            },
        )
    }

    #[test]
    fn canonical_text_is_apimachinerys() {
        for (text, want) in [
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("2.5", "2500m"),
            ("3072Mi", "3Gi"),
            ("1.5Gi", "1536Mi"),
            ("1500", "1500"),
            ("1e3", "1e3"),
            ("12e2", "1200"),
            ("0.5Ki", "512"),
            ("100Ki", "100Ki"),
            ("1025", "1025"),
            ("0.1", "100m"),
            ("1n", "1n"),
            ("0.0000000001", "1n"),
            ("-1.5", "-1500m"),
            ("5E", "5E"),
            // apimachinery has no suffix beyond E and writes none: 5000E reads back as 5.
            ("5000E", "5"),
            ("0", "0"),
            ("+.", "0"),
            (
                "1Z",
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ),
            ("1Ki5", "unable to parse quantity's suffix"),
        ] {
            assert_eq!(canonical(text), want, "{text}");
        }
    }

    #[test]
    fn sums_take_the_first_nonzero_format() {
        let sum = |texts: &[&str]| {
            let mut sum = Quantity::zero();
            for text in texts {
                sum.add(&Quantity::parse(text).unwrap());
            }
            sum.canonical()
        };
        assert_eq!(sum(&["2000m", "1000m"]), "3");
        assert_eq!(sum(&["10752Mi", "3072Mi"]), "13824Mi");
        assert_eq!(sum(&["1G", "2Gi"]), "3147483648");
        assert_eq!(sum(&["0", "2Gi"]), "2Gi");
        assert_eq!(sum(&[]), "0");
    }

    #[test]
    fn scaled_values_round_up_and_floats_follow_go() {
        let q = |text: &str| Quantity::parse(text).unwrap();
        assert_eq!(q("100m").value(), 1);
        assert_eq!(q("1.5").milli_value(), 1500);
        assert_eq!(q("1.5Gi").value(), 1_610_612_736);
        assert_eq!(q("1n").milli_value(), 1);
        assert_eq!(q("1e30").value(), 0, "Go's int form overflows to 0");
        assert_eq!(
            q("123456789012345678e3").value(),
            123456789012345678i64.wrapping_mul(1000),
            "…or wraps, when it multiplies at once"
        );
        assert_eq!(q("100m").approximate_f64(), 0.1);
        assert_eq!(q("1Gi").approximate_f64(), 1_073_741_824.0);
        assert!(q("1.5") == q("1500m"));
    }
}
