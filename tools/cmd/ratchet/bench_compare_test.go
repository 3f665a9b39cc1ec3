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
	for _, args := range [][]string{{"--mix"}, {"--mix", "--compare", "/bin/true"}} {
		errOut.Reset()
		assert.Equal(t, 2, run(context.Background(), append([]string{"bench", "--store", "sqlite"}, args...), &out, &errOut), args)
		assert.Contains(t, errOut.String(), "--mix goes with --compare river", args)
	}
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--store", "postgres://u@h/d", "--compare", "river", "--mix", "--priorities", "5"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "--priorities and --tasks are not for --mix")
	errOut.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"bench", "--store", "sqlite", "--compare", "river", "--mix"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "--mix runs on PostgreSQL")
}

// River's flags of each shape: none for the one task, so that an older
// compare/river runs it.
func TestCompareShapeRiverArgs(t *testing.T) {
	assert.Empty(t, oneTaskShape.riverArgs())
	assert.Equal(t, []string{"--kinds", "10", "--priorities", "5"}, mixShape.riverArgs())
}

// Which side and which shape go first alternate from pair to pair.
func TestPairOrder(t *testing.T) {
	for i, want := range []struct {
		sides  []string
		shapes []int
	}{{[]string{"ratchet", "river"}, []int{0, 1}}, {[]string{"river", "ratchet"}, []int{1, 0}}, {[]string{"ratchet", "river"}, []int{0, 1}}} {
		sides, shapes := pairOrder(i, 2)
		assert.Equal(t, want.sides, sides, "pair %d", i+1)
		assert.Equal(t, want.shapes, shapes, "pair %d", i+1)
	}
	_, shapes := pairOrder(1, 1)
	assert.Equal(t, []int{0}, shapes)
}

// The closing lines: each shape's median ratios, the mix's work rate over
// the one task's (Ratchet's medians), the median insert / server COPY and
// each shape's CPU medians.
func TestCompareLines(t *testing.T) {
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	one := shapeRuns{shape: oneTaskShape,
		ratchet: []rates{{100, 40}, {120, 50}, {110, 45}}, river: []rates{{100, 20}, {100, 20}, {100, 20}},
		ratchetCPU: []cpuCost{{us(5), us(40)}, {us(5), us(40)}, {us(5), us(40)}}, riverCPU: []cpuCost{{us(10), us(60)}, {us(10), us(60)}, {us(10), us(60)}}}
	mix := shapeRuns{shape: mixShape,
		ratchet: []rates{{90, 36}, {80, 20}, {100, 40}}, river: []rates{{100, 40}, {100, 40}, {100, 40}},
		ratchetCPU: []cpuCost{{us(5), us(40)}, {}, {us(5), us(40)}}, riverCPU: []cpuCost{{us(10), us(60)}, {us(10), us(60)}, {us(10), us(60)}}}
	copies := copyRuns{rates: []float64{200, 150, 100}, ratios: []float64{0.5, 0.8, 1.1}}
	lines, err := compareLines([]shapeRuns{one, mix}, true, copies)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"median ratio [one task] Ratchet / River over 3 pairs: insert 1.10, work 2.25",
		"median ratio [mix 10x5] Ratchet / River over 3 pairs: insert 0.90, work 0.90",
		"mix 10x5 / one task, Ratchet's work rate (medians): 0.80",
		"insert / server COPY: 0.80 (Ratchet's insert [one task] over the server's own COPY of the same rows, median of 3 runs; the COPY 150 rows/s)",
		"median ratio of machine CPU per job [one task], River / Ratchet: insert 2.00, work 1.50",
		// The mix's second pair has no CPU figures: no median.
	}, lines)

	// One shape, as --compare river without --mix prints it: untagged,
	// and with no server COPY on SQLite.
	lines, err = compareLines([]shapeRuns{one}, false, copies)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"median ratio Ratchet / River over 3 pairs: insert 1.10, work 2.25",
		"insert / server COPY: 0.80 (Ratchet's insert over the server's own COPY of the same rows, median of 3 runs; the COPY 150 rows/s)",
		"median ratio of machine CPU per job, River / Ratchet: insert 2.00, work 1.50",
	}, lines)
	lines, err = compareLines([]shapeRuns{one}, false, copyRuns{})
	require.NoError(t, err)
	assert.Len(t, lines, 2)

	_, err = compareLines([]shapeRuns{{shape: mixShape, ratchet: []rates{{1, 1}}}}, true, copyRuns{})
	assert.ErrorContains(t, err, "mix 10x5")
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
	assert.Regexp(t, `(?m)^insert / server COPY: \d+\.\d\d \(`, out.String())
	assert.NotContains(t, out.String(), "[one task]", "one shape: the lines are as they were")
}

// TestBenchCompareRiverMixPostgres runs one pair of each shape, 2,000
// jobs each, on PostgreSQL.
func TestBenchCompareRiverMixPostgres(t *testing.T) {
	dsn, _ := dbtest.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"bench", "--store", dsn, "--jobs", "2000", "--compare", "river", "--mix", "--pairs", "1"}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	t.Logf("%s in %s", strings.TrimSpace(out.String()), time.Since(start).Round(time.Millisecond))
	for _, want := range []string{
		`(?m)^pair 1 \[one task\] \(ratchet first\): insert \d+ / \d+ jobs/s = \d+\.\d\d, work `,
		`(?m)^pair 1 \[mix 10x5\] \(ratchet first\): insert \d+ / \d+ jobs/s = \d+\.\d\d, work `,
		`(?m)^median ratio \[one task\] Ratchet / River over 1 pairs: insert \d+\.\d\d, work \d+\.\d\d$`,
		`(?m)^median ratio \[mix 10x5\] Ratchet / River over 1 pairs: insert \d+\.\d\d, work \d+\.\d\d$`,
		`(?m)^mix 10x5 / one task, Ratchet's work rate \(medians\): \d+\.\d\d$`,
		`(?m)^insert / server COPY: \d+\.\d\d \(`,
	} {
		assert.Regexp(t, want, out.String())
	}
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
