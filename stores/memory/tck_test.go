package memory_test

import (
	"testing"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
	"github.com/ratchet-go/ratchet/tck"
)

// TestConformance certifies the memory store with the store conformance kit.
// The memory store keeps jobs as Go values, which cannot be half-written, so
// the harness has no Corrupt hook and the corrupted-row cases are skipped.
func TestConformance(t *testing.T) {
	tck.Run(t, tck.Harness{
		Open: func(*testing.T) spi.Store { return memory.New() },
	})
}
