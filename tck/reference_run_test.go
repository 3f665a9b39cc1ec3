//go:build !ratchet_bugs

package tck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// The run's result depends on the memory store's source, which this
	// build does not compile: reading it makes the test cache see its
	// changes.
	dir, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/ratchet-go/ratchet/stores/memory").Output()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(dir)), "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the memory store's source")
	for _, f := range files {
		_, err := os.ReadFile(f)
		require.NoError(t, err)
	}
	out, err := exec.Command("go", "test", "-tags", "ratchet_bugs", "-count=1", "-run", "^TestRef", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("with -tags ratchet_bugs:\n%s", out)
}
