// Package shapes is a tiny package for ingest tests.
package shapes

// Shape has an area.
type Shape interface {
	Area() float64
}

// Named is a Shape with a name.
type Named interface {
	Shape
	Name() string
}

// Square is a Shape.
type Square struct {
	Side float64
}

// Area implements Shape.
func (s Square) Area() float64 { return s.Side * s.Side }

// Name implements Named.
func (s *Square) Name() string { return "square:" + osName() }

// Unit is the unit side.
const Unit = 1.0

// Default is a unit square.
var Default = NewSquare(Unit)

// NewSquare returns a square.
func NewSquare(side float64) *Square {
	return &Square{Side: side}
}

// Total sums the areas.
func Total(ss []Shape) float64 {
	var t float64
	for _, s := range ss {
		t += s.Area()
	}
	return t
}

func init() { _ = Default }

func init() {}
