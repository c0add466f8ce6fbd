package plots

import "testing"

func TestPositionGroup(t *testing.T) {
	for _, c := range []struct{ k, g, from, to int }{
		{1, 0, 1, 1}, {64, 63, 64, 64},
		{65, 64, 65, 72}, {72, 64, 65, 72}, {73, 65, 73, 80}, {128, 71, 121, 128},
		{129, 72, 129, 144}, {256, 79, 241, 256}, {257, 80, 257, 288}, {512, 87, 481, 512}, {513, 88, 513, 576},
	} {
		g, from, to := positionGroup(c.k)
		if g != c.g || from != c.from || to != c.to {
			t.Errorf("positionGroup(%d) = %d, %d–%d; want %d, %d–%d", c.k, g, from, to, c.g, c.from, c.to)
		}
	}
	// groups are contiguous and every gap falls in its own group's range
	prevG, prevTo := -1, 0
	for k := 1; k <= 5000; k++ {
		g, from, to := positionGroup(k)
		if k < from || k > to {
			t.Fatalf("gap %d outside its group %d–%d", k, from, to)
		}
		if g != prevG {
			if g != prevG+1 || from != prevTo+1 {
				t.Fatalf("gap %d: group %d (%d–%d) does not follow group %d ending at %d", k, g, from, to, prevG, prevTo)
			}
			prevG, prevTo = g, to
		}
	}
}
