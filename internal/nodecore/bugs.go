//go:build ratchet_bugs

package nodecore

import (
	"sync/atomic"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// Bugs reports whether this build can plant engine bugs: true under the
// build tag ratchet_bugs, which only the simulator's mutation runs use.
const Bugs = true

var planted atomic.Pointer[string]

// Plant turns on the planted engine bug name in this process ("" turns
// every bug off): its guard in the engine's parts (bug(name)) then breaks
// that part, for the cluster simulator to show that one of its invariants
// catches it. One bug is planted per process at a time.
func Plant(name string) {
	planted.Store(&name)
	ratchet.PlantBug(name) // the SDK's parts (durable steps) have guards too
}

// bug reports whether the planted engine bug name is on.
func bug(name string) bool {
	p := planted.Load()
	return p != nil && *p == name
}
