package ferrettest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDemoOnFerretDB runs the ratchet command's demo against the embedded
// MongoDB-protocol server: `ratchet demo --store mongodb://...` must finish
// with every job in its expected state, as on the SQL stores.
func TestDemoOnFerretDB(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, "tools", "cmd", "ratchet")); err != nil {
		t.Skipf("the ratchet command's source is not at %s", root)
	}
	bin := filepath.Join(t.TempDir(), "ratchet")
	build := exec.Command("go", "build", "-o", bin, "./tools/cmd/ratchet")
	build.Dir = root
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the ratchet command: %s", out)

	srv := startFerret(t)
	uri := srv.URIWithDatabase("demo")
	cmd := exec.CommandContext(context.Background(), bin, "demo", "--store", uri, "--jobs", "300")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "demo output:\n%s", out)
	require.True(t, strings.Contains(string(out), "every job reached its expected state"), "demo output:\n%s", out)
	require.Contains(t, string(out), "submitted             300")
}
