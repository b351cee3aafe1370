package shapes

import "testing"

func TestArea(t *testing.T) {
	if got := NewSquare(2).Area(); got != 4 {
		t.Fatalf("area %v", got)
	}
	check(t, Default)
}

func check(t *testing.T, s Shape) {
	if s.Area() <= 0 {
		t.Fatal("empty")
	}
}
