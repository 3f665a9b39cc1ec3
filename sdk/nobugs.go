//go:build !ratchet_bugs

package ratchet

// bug is false in a normal build, and the compiler drops the code it
// guards (see bugs.go).
func bug(string) bool { return false }
