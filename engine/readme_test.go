package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's five-minute tour is example_test.go as a program of its own
// (package main, func main): Example runs it with its output checked, and
// this test keeps the two from drifting apart.
func TestReadmeTourIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## A five-minute tour\n")
	require.True(t, ok, "the README has a five-minute tour section")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the tour has a Go code block")
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "the tour's code block ends")

	example, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	want := strings.NewReplacer("package engine_test\n", "package main\n", "\nfunc Example() {\n", "\nfunc main() {\n").
		Replace(string(example))
	assert.Equal(t, want, block,
		"the README's tour must be engine/example_test.go with package main and func main: change both together")
}
