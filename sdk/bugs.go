//go:build ratchet_bugs

package ratchet

import "sync/atomic"

// planted is the engine bug planted in the SDK's own parts (PlantBug).
var planted atomic.Pointer[string]

// PlantBug turns on the planted engine bug name in the SDK's parts (its
// guard, bug(name), then breaks what it guards), for the cluster
// simulator to show that one of its invariants catches it; "" turns every
// bug off. The engine's nodecore.Plant calls it. Only a build with the tag
// ratchet_bugs has PlantBug; a normal build compiles no guard.
func PlantBug(name string) { planted.Store(&name) }

// bug reports whether the planted engine bug name is on.
func bug(name string) bool {
	p := planted.Load()
	return p != nil && *p == name
}
