package jsonscan

import (
	"math"
	"math/big"
	"math/bits"
)

// Float returns the float64 nearest to mant × 10^exp10, negated when neg —
// the value strconv.ParseFloat gives the decimal, correctly rounded — by
// the Eisel–Lemire algorithm (D. Lemire, "Number Parsing at a Gigabyte per
// Second", Software: Practice and Experience 51(8), 2021, §5; N. Eisel's
// method): the mantissa, normalized, times a 128-bit truncated power of
// ten's significand, one 64×64→128-bit product (two when the first is too
// close to a rounding boundary), rounded to 53 bits. ok is false when the
// product cannot decide the rounding, when exp10 is outside
// [FloatMinExp10, FloatMaxExp10], when mant is 0, or when the result is
// subnormal or infinite: the caller then asks strconv.ParseFloat. mant
// must hold every significant digit of the decimal (a truncated one is not
// the same number).
//
// The importers' numbers that miss Clinger's exact fast path (a mantissa
// up to 2^53 times or over a power of ten up to 10^22) are mostly Python
// floats written at full precision, 17 significant digits (vLLM's and
// SGLang's per-gap seconds: 41M of them, twice, in a 100k-request result):
// strconv and the string it needs took most of their decoding.
func Float(mant uint64, exp10 int, neg bool) (float64, bool) {
	if mant == 0 || exp10 < FloatMinExp10 || exp10 > FloatMaxExp10 {
		return 0, false
	}
	pow := &powersOfFive[exp10-FloatMinExp10]
	lz := bits.LeadingZeros64(mant)
	w := mant << lz
	// the binary exponent: floor(exp10 · log2(10)) (217706/2^16 is
	// log2(10) to within 2^-18, exact enough for |exp10| ≤ 1500), the
	// product's 128 bits, the double's bias, less the normalization
	exp2 := uint64(217706*exp10>>16+64+1023) - uint64(lz)
	hi, lo := bits.Mul64(w, pow.hi)
	if hi&0x1ff == 0x1ff && lo+w < lo {
		// the low bits are all ones: the truncated power's low word may
		// carry into them; add its product
		yhi, ylo := bits.Mul64(w, pow.lo)
		mhi, mlo := hi, lo+yhi
		if mlo < lo {
			mhi++
		}
		if mhi&0x1ff == 0x1ff && mlo+1 == 0 && ylo+w < ylo {
			return 0, false // still undecided
		}
		hi, lo = mhi, mlo
	}
	top := hi >> 63
	m := hi >> (top + 9) // 54 bits
	exp2 -= 1 ^ top
	if lo == 0 && hi&0x1ff == 0 && m&3 == 1 {
		return 0, false // exactly halfway between two doubles, perhaps
	}
	m += m & 1 // round half up to 53 bits (ties were refused above)
	m >>= 1
	if m>>53 > 0 {
		m >>= 1
		exp2++
	}
	if exp2-1 >= 0x7ff-1 {
		return 0, false // subnormal, zero or infinite
	}
	b := exp2<<52 | m&(1<<52-1)
	if neg {
		b |= 1 << 63
	}
	return math.Float64frombits(b), true
}

// The powers of ten Float holds: 10^-100 … 10^100.
const (
	FloatMinExp10 = -100
	FloatMaxExp10 = 100
)

// powersOfFive[q−FloatMinExp10] is 5^q's significand in 128 bits, its top
// bit set: for q ≥ 0, 5^q shifted and truncated; for q < 0, ⌊2^b / 5^−q⌋ +
// 1 for the b that puts it in [2^127, 2^128] (rounded up, so that the
// product is never below the true one; Lemire, §5 and the fast_float
// table's rule), truncated to 128 bits. Computed exactly with math/big.
var powersOfFive = func() []struct{ hi, lo uint64 } {
	out := make([]struct{ hi, lo uint64 }, FloatMaxExp10-FloatMinExp10+1)
	one := big.NewInt(1)
	for q := FloatMinExp10; q <= FloatMaxExp10; q++ {
		var c *big.Int
		if q >= 0 {
			c = new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(q)), nil)
			for c.BitLen() < 128 {
				c.Lsh(c, 1)
			}
			c.Rsh(c, uint(c.BitLen()-128))
		} else {
			p := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(-q)), nil)
			z := p.BitLen() // 2^(z−1) ≤ 5^−q < 2^z
			b := z + 127
			if q < -27 {
				b = 2*z + 128
			}
			c = new(big.Int).Lsh(one, uint(b))
			c.Quo(c, p)
			c.Add(c, one)
			for c.BitLen() > 128 {
				c.Rsh(c, 1)
			}
		}
		lo := new(big.Int).And(c, new(big.Int).SetUint64(math.MaxUint64))
		hi := new(big.Int).Rsh(c, 64)
		out[q-FloatMinExp10] = struct{ hi, lo uint64 }{hi.Uint64(), lo.Uint64()}
	}
	return out
}()
