// Package memory is an in-process spi.Store: the reference for Ratchet's
// store semantics, and the store of unit tests, simulations and the demo's
// --store memory. Nothing survives the process.
//
// Claims take one mutex and read the heads of five per-priority heaps of
// PENDING jobs ordered by due time, so a claim of N jobs costs
// O(N log n) whatever the backlog, and aging is exact: within one level the
// effective priority only grows with waiting time, so the best N overall are
// among the best N of each level.
//
// Capabilities: every spi.Store operation, and the audit log
// (spi.AuditLog). Transactional submit is not offered (there is no
// transaction to join). Wakeups (spi.WakeupListener) reach the engines
// that share the store in the process.
//
// It is also the conformance kit's reference store: a build with the tag
// ratchet_bugs compiles the guards (s.bug(name)) through which the kit's
// self-test plants each of its defects (Plant), damaged rows (Corrupt)
// and lost connections (BreakConnections); a normal build compiles none
// of them (nobugs.go).
package memory
