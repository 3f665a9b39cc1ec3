package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMutate(t *testing.T) {
	src := []byte("package p\n\nfunc f(a, b int) bool {\n\ta++\n\treturn a < b && -a == b+1\n}\n")
	for _, c := range []struct {
		line, col int
		kind      string
		want      string
	}{
		{5, 11, "CONDITIONALS_BOUNDARY", "\treturn a <= b && -a == b+1"},
		{5, 11, "CONDITIONALS_NEGATION", "\treturn a >= b && -a == b+1"},
		{5, 21, "CONDITIONALS_NEGATION", "\treturn a < b && -a != b+1"},
		{5, 25, "ARITHMETIC_BASE", "\treturn a < b && -a == b-1"},
		{5, 18, "INVERT_NEGATIVES", "\treturn a < b && +a == b+1"},
		{4, 3, "INCREMENT_DECREMENT", "\ta--"},
	} {
		got, _, err := mutate(src, c.line, c.col, c.kind)
		require.NoError(t, err, "%+v", c)
		assert.Contains(t, string(got), c.want, "%+v", c)
	}
	_, _, err := mutate(src, 5, 9, "CONDITIONALS_BOUNDARY")
	assert.ErrorContains(t, err, "does not change", "a is no operator")
	_, _, err = mutate(src, 5, 10, "CONDITIONALS_BOUNDARY")
	assert.ErrorContains(t, err, "no token at 5:10")
	_, _, err = mutate(src, 5, 11, "INVERT_LOOPCTRL")
	assert.ErrorContains(t, err, "not supported")
}
