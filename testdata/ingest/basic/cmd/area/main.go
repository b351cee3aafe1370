// Command area prints the area of unit squares.
package main

import (
	"fmt"
	"os"

	"example.com/basic/shapes"
)

type circle struct{ r float64 }

func (c circle) Area() float64 { return 3 * c.r * c.r }

func main() {
	var sq shapes.Square
	sq.Side = 2
	all := []shapes.Shape{shapes.Default, sq, circle{r: 1}}
	fmt.Fprintln(os.Stdout, shapes.Total(all), sq.Name())
}
