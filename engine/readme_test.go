package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tour of the manual (docs/jobs.md, "A tour") is example_tour_test.go
// as a program of its own (package main, func main): Example_tour runs it
// with its output checked, and this test keeps the two from drifting
// apart.
func TestDocsTourIsTheExample(t *testing.T) {
	page, err := os.ReadFile("../docs/jobs.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(page), "\n## A tour\n")
	require.True(t, ok, "docs/jobs.md has a section \"A tour\"")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the tour has a Go code block")
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "the tour's code block ends")

	example, err := os.ReadFile("example_tour_test.go")
	require.NoError(t, err)
	want := strings.NewReplacer("package engine_test\n", "package main\n", "\nfunc Example_tour() {\n", "\nfunc main() {\n").
		Replace(string(example))
	assert.Equal(t, want, block,
		"the tour of docs/jobs.md must be engine/example_tour_test.go with package main and func main: change both together")
}
