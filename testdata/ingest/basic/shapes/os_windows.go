//go:build windows

package shapes

func osName() string { return "windows" }

type handle uintptr

func (h handle) Area() float64 { return float64(h) }
