package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ratchet-go/ratchet/internal/dbtest"
)

// TestPostgresCommands runs migrate, demo and bench against PostgreSQL.
func TestPostgresCommands(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"migrate", "--store", dsn, "--schema", schema}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), "applied migration 0001")

	out.Reset()
	code = run(ctx, []string{"migrate", "--store", dsn, "--schema", schema}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), "is up to date")

	out.Reset()
	code = run(ctx, []string{"demo", "--store", dsn, "--schema", schema, "--jobs", "200"}, &out, &errOut)
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String(), "every job reached its expected state")

	out.Reset()
	code = run(ctx, []string{"bench", "--store", dsn, "--jobs", "2000", "--workers", "50", "--insert-batch", "500"}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var ins, work float64
	_, err := fmt.Sscanf(lines[len(lines)-1], "insert %f jobs/s, work %f jobs/s", &ins, &work)
	assert.NoError(t, err, "last line %q", lines[len(lines)-1])
	assert.Positive(t, ins)
	assert.Positive(t, work)
	// Between the phases, the server's own COPY of the same rows: the line
	// before the last gives our insert over it.
	assert.Contains(t, out.String(), "server COPY of the same rows: ")
	assert.Regexp(t, `^insert / server COPY: \d+\.\d\d \(insert \d+ jobs/s, the server's own COPY of the same rows \d+ rows/s\)$`, lines[len(lines)-2])

	out.Reset()
	code = run(ctx, []string{"bench", "--store", dsn, "--jobs", "1000", "--workers", "50", "--server-copy=false"}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.NotContains(t, out.String(), "server COPY")
}
