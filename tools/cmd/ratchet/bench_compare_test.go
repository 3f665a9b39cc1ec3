package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
)

func TestParseRiverOutput(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      rates
		err       bool
	}{
		{"full", "river: inserted 2000 jobs in 30ms (66667 jobs/s)\nriver: worked 2000 jobs in 100ms (20000 jobs/s)\nriver insert 66667 jobs/s, work 20000 jobs/s\n", rates{66667, 20000}, false},
		{"only the summary", "river insert 1.5e+05 jobs/s, work 17200 jobs/s", rates{150000, 17200}, false},
		{"none", "river: inserted 2000 jobs in 30ms (66667 jobs/s)\n", rates{}, true},
		{"garbled", "river insert fast jobs/s, work 1 jobs/s\n", rates{}, true},
		{"zero", "river insert 0 jobs/s, work 1 jobs/s\n", rates{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRiverOutput(tc.out)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tc.want.Insert, got.Insert, 1e-9)
			assert.InDelta(t, tc.want.Work, got.Work, 1e-9)
		})
	}
}

func TestComparePairs(t *testing.T) {
	for _, tc := range []struct {
		name               string
		ratchet, river     []rates
		medInsert, medWork float64
		ratios             [][2]float64
		err                bool
	}{
		{"one pair", []rates{{200, 30}}, []rates{{100, 20}}, 2, 1.5, [][2]float64{{2, 1.5}}, false},
		{"odd: the middle one", []rates{{300, 10}, {100, 40}, {200, 20}}, []rates{{100, 10}, {100, 10}, {100, 10}}, 2, 2,
			[][2]float64{{3, 1}, {1, 4}, {2, 2}}, false},
		{"even: mean of the two middle ones", []rates{{100, 10}, {200, 20}, {300, 30}, {400, 40}}, []rates{{100, 10}, {100, 10}, {100, 10}, {100, 10}}, 2.5, 2.5,
			[][2]float64{{1, 1}, {2, 2}, {3, 3}, {4, 4}}, false},
		{"uneven", []rates{{1, 1}}, []rates{}, 0, 0, nil, true},
		{"empty", nil, nil, 0, 0, nil, true},
		{"zero river rate", []rates{{1, 1}}, []rates{{0, 1}}, 0, 0, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := comparePairs(tc.ratchet, tc.river)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tc.medInsert, got.MedianInsert, 1e-9)
			assert.InDelta(t, tc.medWork, got.MedianWork, 1e-9)
			require.Len(t, got.Pairs, len(tc.ratios))
			for i, r := range tc.ratios {
				assert.InDelta(t, r[0], got.Pairs[i].InsertRatio, 1e-9, "pair %d insert", i+1)
				assert.InDelta(t, r[1], got.Pairs[i].WorkRatio, 1e-9, "pair %d work", i+1)
			}
		})
	}
}

func TestBenchCompareUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--compare", "sidekiq"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--store", "memory", "--compare", "river"}, &out, &errOut))
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--store", "sqlite", "--compare", "river", "--pairs", "0"}, &out, &errOut))
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--store", "sqlite", "--compare", "river", "--priorities", "3"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "--priorities and --tasks are not for --compare")
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--store", "sqlite", "--compare", "river", "--tasks", "3"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "--priorities and --tasks are not for --compare")
}

func TestParseCompareStore(t *testing.T) {
	for _, tc := range []struct {
		name, store, db string
		want            compareStore
		err             bool
	}{
		{"postgres", "postgres://u@h:5432/d", "", compareStore{Postgres: "postgres://u@h:5432/d"}, false},
		{"postgresql", "postgresql://u@h/d", "", compareStore{Postgres: "postgresql://u@h/d"}, false},
		{"sqlite: a temporary file", "sqlite", "", compareStore{IsSQLite: true}, false},
		{"sqlite with --db", "sqlite", "/tmp/b.db", compareStore{IsSQLite: true, SQLite: "/tmp/b.db"}, false},
		{"sqlite:PATH", "sqlite:b.db", "", compareStore{IsSQLite: true, SQLite: "b.db"}, false},
		{"sqlite://PATH", "sqlite://b.db", "", compareStore{IsSQLite: true, SQLite: "b.db"}, false},
		{"sqlite:///ABSOLUTE", "sqlite:///tmp/b.db", "", compareStore{IsSQLite: true, SQLite: "/tmp/b.db"}, false},
		{"sqlite: names no file", "sqlite:", "", compareStore{}, true},
		{"--db with a URL", "sqlite:b.db", "c.db", compareStore{}, true},
		{"--db with postgres", "postgres://u@h/d", "c.db", compareStore{}, true},
		{"memory", "memory", "", compareStore{}, true},
		{"mysql", "mysql://u@h:3306/d", "", compareStore{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCompareStore(tc.store, tc.db)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestBenchCompareRiverPostgres runs one pair of 2,000 jobs on PostgreSQL,
// building compare/river from the repository.
func TestBenchCompareRiverPostgres(t *testing.T) {
	dsn, _ := dbtest.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"bench", "--store", dsn, "--jobs", "2000", "--compare", "river", "--pairs", "1"}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	t.Logf("%s in %s", strings.TrimSpace(out.String()), time.Since(start).Round(time.Millisecond))
	assert.Contains(t, out.String(), "pair 1 (ratchet first): insert ")
	assert.Contains(t, out.String(), "median ratio Ratchet / River over 1 pairs: insert ")
}

// TestBenchCompareRiverSQLite runs one pair of 2,000 jobs on SQLite (River
// through riversqlite), each on a new file at the path given, which is
// gone afterwards.
func TestBenchCompareRiverSQLite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "compare.db")
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"bench", "--store", "sqlite:" + path, "--jobs", "2000", "--compare", "river", "--pairs", "1"}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	t.Logf("%s in %s", strings.TrimSpace(out.String()), time.Since(start).Round(time.Millisecond))
	assert.Contains(t, out.String(), "on SQLite, a new file "+path+" for each run")
	assert.Contains(t, out.String(), "pair 1 (ratchet first): insert ")
	assert.Contains(t, out.String(), "median ratio Ratchet / River over 1 pairs: insert ")
	assert.NoFileExists(t, path)
	assert.NoFileExists(t, path+"-wal")
}
