//! The element types of attention tensors: f32, and bf16 / fp16 as their 16 bits.

use hcp_sys as sys;

/// A type whose slices can be passed as q, k, v, out and the gradients. Sealed: hcp knows these three only.
pub trait Element: Copy + Default + sealed::Sealed + Send + Sync + 'static {
    #[doc(hidden)]
    const DTYPE: sys::hcp_dtype;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for super::Bf16 {}
    impl Sealed for super::F16 {}
}

impl Element for f32 {
    const DTYPE: sys::hcp_dtype = sys::HCP_DTYPE_F32;
}

/// bfloat16: the upper 16 bits of an f32.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Element for Bf16 {
    const DTYPE: sys::hcp_dtype = sys::HCP_DTYPE_BF16;
}

impl Bf16 {
    /// Rounded to nearest, ties to even; NaN stays NaN.
    pub fn from_f32(x: f32) -> Bf16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return Bf16(((bits >> 16) as u16) | 0x40); // quiet, whatever the payload was
        }
        let round = 0x7fff + ((bits >> 16) & 1);
        Bf16((bits.wrapping_add(round) >> 16) as u16)
    }

    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// IEEE half precision (binary16).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16(pub u16);

impl Element for F16 {
    const DTYPE: sys::hcp_dtype = sys::HCP_DTYPE_F16;
}

impl F16 {
    /// Rounded to nearest, ties to even; overflow gives infinity, tiny values subnormals or zero.
    pub fn from_f32(x: f32) -> F16 {
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exp = ((bits >> 23) & 0xff) as i32;
        let man = bits & 0x7f_ffff;
        if exp == 0xff {
            return F16(sign | 0x7c00 | if man != 0 { 0x200 } else { 0 });
        }
        // The exponent rebased from f32's bias (127) to f16's (15).
        let e = exp - 127 + 15;
        if e >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if e <= 0 {
            if e < -10 {
                return F16(sign); // below half the smallest subnormal
            }
            // Subnormal: the implicit leading 1 made explicit, shifted to f16's fixed exponent.
            let full = man | 0x80_0000;
            let shift = (14 - e) as u32;
            return F16(sign | round_shift(full, shift) as u16);
        }
        // A carry out of the mantissa correctly bumps the exponent (up to infinity).
        let value = ((e as u32) << 10) + round_shift(man, 13);
        F16(sign | value as u16)
    }

    pub fn to_f32(self) -> f32 {
        let sign = ((self.0 & 0x8000) as u32) << 16;
        let exp = ((self.0 >> 10) & 0x1f) as u32;
        let man = (self.0 & 0x3ff) as u32;
        let bits = match (exp, man) {
            (0, 0) => sign,
            (0, _) => {
                // Subnormal: value = man * 2^-24, exact in f32.
                let magnitude = man as f32 * (2.0f32).powi(-24);
                return if sign != 0 { -magnitude } else { magnitude };
            }
            (0x1f, 0) => sign | 0x7f80_0000,
            (0x1f, _) => sign | 0x7fc0_0000 | (man << 13),
            _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
        };
        f32::from_bits(bits)
    }
}

/// `value >> shift`, rounded to nearest with ties to even.
fn round_shift(value: u32, shift: u32) -> u32 {
    let kept = value >> shift;
    let rest = value & ((1u32 << shift) - 1);
    let half = 1u32 << (shift - 1);
    if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_known_encodings() {
        let cases: [(f32, u16); 9] = [
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (0.1, 0x2e66),
            (1.0 / 3.0, 0x3555),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00),        // rounds up past the largest finite value
            (5.960_464_5e-8, 0x0001), // 2^-24, the smallest subnormal
            (2.980_232_2e-8, 0x0000), // half of it: a tie, to even (zero)
            (-0.0, 0x8000),
        ];
        for (x, bits) in cases {
            assert_eq!(F16::from_f32(x).0, bits, "{}", x);
        }
        assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
        assert_eq!(F16::from_f32(f32::INFINITY).0, 0x7c00);
    }

    #[test]
    fn every_f16_survives_a_round_trip_through_f32() {
        for bits in 0..=u16::MAX {
            let h = F16(bits);
            if h.to_f32().is_nan() {
                continue;
            }
            assert_eq!(F16::from_f32(h.to_f32()).0, bits, "{:#06x} -> {}", bits, h.to_f32());
        }
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(Bf16::from_f32(1.0).0, 0x3f80);
        assert_eq!(Bf16::from_f32(-2.5).to_f32(), -2.5);
        // 1 + 2^-8 is halfway between two bf16 values: to even (1.0); a bit more rounds up.
        assert_eq!(Bf16::from_f32(1.0 + 1.0 / 256.0).0, 0x3f80);
        assert_eq!(Bf16::from_f32(1.0 + 1.5 / 256.0).0, 0x3f81);
        assert!(Bf16::from_f32(f32::NAN).to_f32().is_nan());
        for bits in 0..=u16::MAX {
            let b = Bf16(bits);
            if !b.to_f32().is_nan() {
                assert_eq!(Bf16::from_f32(b.to_f32()).0, bits);
            }
        }
    }
}
