//go:build !ratchet_bugs

package nodecore

// Bugs reports whether this build can plant engine bugs: false in a normal
// build, where every guard (bug(name)) is false, and the compiler drops
// the code it guards.
const Bugs = false

// Plant does nothing in a normal build: see the build tag ratchet_bugs.
func Plant(string) {}

// bug is false: no bug is planted in a normal build.
func bug(string) bool { return false }
