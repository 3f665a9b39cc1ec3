package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
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
	code := run([]string{"-seeds", "1..16", "-steps", "3000", "-mutant", "fence"}, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `FAIL seed (\d+): simtest: seed (\d+): invariant "fence" violated`, out.String())
	assert.Contains(t, out.String(), "reproduce: go run ./simtest/cmd/simtest -seed ")
	assert.Regexp(t, `swept seeds 1\.\.16: 16 runs, .* [1-9]\d* failed`, out.String())
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

func TestEngineBugIsCaught(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-seed", "1", "-engine-bug", "ignore-fence"}, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), `invariant "fence" violated`)
	assert.Contains(t, errOut.String(), "-engine-bug ignore-fence")
}
