//go:build !ratchet_bugs

package tck

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelfMemoryBugs runs TestSelfMemoryCatchesBugs in a build that can
// plant defects in memory.Store (the tag ratchet_bugs): a normal build
// compiles none.
func TestSelfMemoryBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("the memory store's defects need a build with -tags ratchet_bugs")
	}
	out, err := exec.Command("go", "test", "-tags", "ratchet_bugs", "-count=1", "-run", "^TestSelfMemoryCatchesBugs$", "-v", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("with -tags ratchet_bugs:\n%s", out)
}
