package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBench writes a script that answers `bench ...` as a burn-down of
// ratchet bench does, at the given rates, logging its arguments to log.
func fakeBench(t *testing.T, dir, name string, insert, work int, log string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	script := fmt.Sprintf(`#!/bin/sh
echo "$@" >> %s
echo "ratchet bench: burndown"
echo "inserting 1000 jobs"
echo "inserted 1000 jobs in 0.1s"
echo "worked 1000 jobs in 0.2s"
echo "insert %d jobs/s, work %d jobs/s"
`, log, insert, work)
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

// bench --compare BIN runs both binaries alternately, each on a new
// SQLite file, and prints each pair's ratios and their medians.
func TestBenchCompareBinary(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	this := fakeBench(t, dir, "this", 1100, 550, log)
	old := fakeBench(t, dir, "old", 1000, 500, log)
	defer func(f func() (string, error)) { selfBinary = f }(selfBinary)
	selfBinary = func() (string, error) { return this, nil }

	code, out, errOut := cli(t, "bench", "--compare", old, "--pairs", "3", "--jobs", "1000", "--store", "sqlite")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "pair 1 (this first): insert 1100 / 1000 jobs/s = 1.100, work 550 / 500 jobs/s = 1.100")
	assert.Contains(t, out, "pair 2 (BIN first)")
	assert.Contains(t, out, "median ratio this / BIN over 3 pairs: insert 1.100, work 1.100 jobs/s")
	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(calls), "bench --jobs 1000 --workers 1000 --insert-batch 10000 --store sqlite --db ")
	// This binary is told not to time the server's COPY; the other, whose
	// bench --help does not list --server-copy, is asked nothing new.
	assert.Len(t, regexp.MustCompile(`(?m)^bench --jobs .* --server-copy=false$`).FindAllString(string(calls), -1), 3)
	assert.Len(t, regexp.MustCompile(`(?m)^bench --jobs .* --db \S+$`).FindAllString(string(calls), -1), 3)

	code, _, errOut = cli(t, "bench", "--compare", filepath.Join(dir, "missing"), "--store", "sqlite")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "not a ratchet binary")
	// Against a binary, any store a burn-down takes: each run opens its own.
	code, _, errOut = cli(t, "bench", "--compare", old, "--pairs", "1", "--jobs", "1000", "--store", "mysql://root@127.0.0.1:3306/test")
	require.Equal(t, 0, code, errOut)
	calls, err = os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(calls), "--store mysql://root@127.0.0.1:3306/test")
}

// A binary whose bench --help lists --server-copy is told it too.
func TestHasServerCopy(t *testing.T) {
	dir := t.TempDir()
	knows := filepath.Join(dir, "knows")
	require.NoError(t, os.WriteFile(knows, []byte("#!/bin/sh\necho '      --server-copy   burndown on PostgreSQL: ...'\n"), 0o755))
	assert.True(t, hasServerCopy(context.Background(), knows))
	assert.False(t, hasServerCopy(context.Background(), fakeBench(t, dir, "old", 1, 1, filepath.Join(dir, "log"))))
	assert.False(t, hasServerCopy(context.Background(), filepath.Join(dir, "missing")))
}
