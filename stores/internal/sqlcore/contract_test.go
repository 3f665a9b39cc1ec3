package sqlcore_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A dialect is checked by the compiler: testdata/dialect, the least
// Database there is, builds; without its Holders method (the tag
// omit_holders), the build fails and the error names the method.
func TestADialectWithoutARequiredMethodDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package twice")
	}
	build := func(tags string) (string, error) {
		out, err := exec.Command("go", "build", "-tags", tags, "./testdata/dialect").CombinedOutput()
		return string(out), err
	}
	out, err := build("")
	require.NoError(t, err, "the complete dialect builds:\n%s", out)
	out, err = build("omit_holders")
	require.Error(t, err, "a dialect without Holders built")
	assert.Contains(t, out, "does not implement sqlcore.Database[string] (missing method Holders)")
}
