package shapes_test

import (
	"fmt"

	"example.com/basic/shapes"
)

func ExampleTotal() {
	fmt.Println(shapes.Total([]shapes.Shape{shapes.NewSquare(2)}))
	// Output: 4
}
