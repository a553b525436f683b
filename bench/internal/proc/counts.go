package proc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Counts parses a flag's comma-separated list of counts, each from lo to
// hi (hi 0: no bound), as every bench takes its sizes and writer counts.
func Counts(flag, list string, lo, hi int) ([]int, error) {
	if hi == 0 {
		hi = math.MaxInt
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			if hi == math.MaxInt {
				return nil, fmt.Errorf("-%s: %q is not a number of at least %d", flag, f, lo)
			}
			return nil, fmt.Errorf("-%s: %q is not a number from %d to %d", flag, f, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}
