package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/simtest/cluster"
)

func TestSingleRun(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-seed", "3", "-steps", "400"}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	for _, want := range []string{"seed 3: ", "jobs ", "faults: ", "invariant checks: ", "trace sha256 ", "all invariants held"} {
		assert.Contains(t, out.String(), want)
	}
}

func TestSweep(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-seeds", "1..6", "-steps", "400", "-parallel", "2"}, &out, &errOut)
	assert.Equal(t, 0, code)
	assert.Contains(t, out.String(), "swept seeds 1..6: 6 runs")
	assert.Contains(t, out.String(), "0 failed")
}

func TestSweepReportsViolationsWithSeeds(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-seeds", "1..40", "-steps", "3000", "-mutant", "fence"}, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `FAIL seed (\d+): simtest: seed (\d+): invariant "fence" violated`, out.String())
	assert.Contains(t, out.String(), "reproduce: go run ./simtest/cmd/simtest -seed ")
	assert.Regexp(t, `swept seeds 1\.\.40: 40 runs, .* [1-9]\d* failed`, out.String())
}

func TestSingleRunViolationExitsNonZero(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-seed", "1", "-mutant", "budget"}, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), `invariant "crash-budget" violated`)
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-seeds", "5"}, {"-seeds", "9..1"}, {"-aging", "sometimes"}, {"-mutant", "nope"}, {"-engine-bug", "nope"}, {"-bogus"},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errOut), "%v", args)
	}
}

// An engine bug is planted by a build with -tags ratchet_bugs, and its
// sweep exits 1 naming the invariant that caught it; a normal build says
// how to make one.
func TestEngineBugIsCaught(t *testing.T) {
	var out, errOut bytes.Buffer
	if !cluster.BugsPlantable {
		assert.Equal(t, 2, run([]string{"-seed", "1", "-engine-bug", "ignore-fence"}, &out, &errOut))
		assert.Contains(t, errOut.String(), "go run -tags ratchet_bugs ./simtest/cmd/simtest -seed 1 -engine-bug ignore-fence")
		if testing.Short() {
			t.Skip("builds the command with -tags ratchet_bugs")
		}
		bin := filepath.Join(t.TempDir(), "simtest")
		build, err := exec.Command("go", "build", "-tags", "ratchet_bugs", "-o", bin, ".").CombinedOutput()
		require.NoError(t, err, "%s", build)
		cmd := exec.Command(bin, "-seeds", "1..50", "-engine-bug", "ignore-fence")
		got, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%s", got)
		assert.Equal(t, 1, exit.ExitCode())
		assert.Contains(t, string(got), "fence")
		return
	}
	code := run([]string{"-seed", "1", "-engine-bug", "ignore-fence"}, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), `invariant "fence" violated`)
	assert.Contains(t, errOut.String(), "-engine-bug ignore-fence")
}
