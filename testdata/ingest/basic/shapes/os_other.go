//go:build !windows

package shapes

func osName() string { return "other" }
