//go:build !ratchet_bugs

package tck

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelfReference runs the tests of the reference store (TestRef...:
// it passes the kit, and each of its planted defects fails the cases
// meant to catch it) in a build with the tag ratchet_bugs, the only one
// that can plant them.
func TestSelfReference(t *testing.T) {
	if testing.Short() {
		t.Skip("the reference store's defects need a build with -tags ratchet_bugs")
	}
	out, err := exec.Command("go", "test", "-tags", "ratchet_bugs", "-count=1", "-run", "^TestRef", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("with -tags ratchet_bugs:\n%s", out)
}
