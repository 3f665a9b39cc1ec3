// Package mutant holds deliberately broken store wrappers, each violating
// one store invariant, so that simtest's own tests and the simtest command
// (-mutant) can show that the simulator catches them.
package mutant
