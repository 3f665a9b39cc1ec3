package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ratchet-go/ratchet/stores/sqlite"
	"github.com/ratchet-go/ratchet/tools/internal/bench"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// rates are one burn-down's insert and work rates, in jobs per second.
type rates struct{ Insert, Work float64 }

// comparePair is one pair of burn-downs and its ratios (Ratchet / River).
type comparePair struct {
	Ratchet, River         rates
	InsertRatio, WorkRatio float64
}

// compareResult is the pairs and the median of their ratios.
type compareResult struct {
	Pairs                    []comparePair
	MedianInsert, MedianWork float64
}

// parseRiverOutput reads compare/river's output: its last line
// "river insert X jobs/s, work Y jobs/s".
func parseRiverOutput(out string) (rates, error) { return parseRates(out, "river insert ") }

// parseRates reads the rates of a burn-down's output: its last line that
// starts with prefix ("insert " for ratchet bench, "river insert " for
// compare/river) and goes on "X jobs/s, work Y jobs/s".
func parseRates(out, prefix string) (rates, error) {
	var r rates
	found := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, prefix) || !strings.Contains(line, ", work ") {
			continue
		}
		var ins, work float64
		if _, err := fmt.Sscanf(strings.TrimPrefix(line, prefix), "%g jobs/s, work %g jobs/s", &ins, &work); err != nil {
			return rates{}, fmt.Errorf("output line %q: %v", line, err)
		}
		r, found = rates{Insert: ins, Work: work}, true
	}
	if !found || r.Insert <= 0 || r.Work <= 0 {
		return rates{}, fmt.Errorf("the output has no line \"%sX jobs/s, work Y jobs/s\": %q", prefix, out)
	}
	return r, nil
}

// comparePairs pairs the runs (ratchet[i] with river[i]), computes each
// pair's ratios and their medians.
func comparePairs(ratchet, river []rates) (compareResult, error) {
	if len(ratchet) != len(river) || len(ratchet) == 0 {
		return compareResult{}, fmt.Errorf("%d Ratchet runs and %d River runs: want as many of each, at least one", len(ratchet), len(river))
	}
	var res compareResult
	var ins, work []float64
	for i := range ratchet {
		if river[i].Insert <= 0 || river[i].Work <= 0 {
			return compareResult{}, fmt.Errorf("pair %d: River rate not positive", i+1)
		}
		p := comparePair{Ratchet: ratchet[i], River: river[i],
			InsertRatio: ratchet[i].Insert / river[i].Insert, WorkRatio: ratchet[i].Work / river[i].Work}
		res.Pairs = append(res.Pairs, p)
		ins, work = append(ins, p.InsertRatio), append(work, p.WorkRatio)
	}
	res.MedianInsert, res.MedianWork = median(ins), median(work)
	return res, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// repoRoot finds the repository's root: the folder of go env GOWORK, or
// the first folder up from the working directory holding go.work.
func repoRoot() (string, error) {
	if out, err := exec.Command("go", "env", "GOWORK").Output(); err == nil {
		if w := strings.TrimSpace(string(out)); w != "" && w != "off" {
			return filepath.Dir(w), nil
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.work above the working directory; give --river-bin")
		}
		dir = up
	}
}

// buildRiver builds compare/river into dir and returns the binary's path.
func buildRiver(ctx context.Context, dir string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "riverbench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./compare/river")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./compare/river in %s: %v\n%s", root, err, out)
	}
	return bin, nil
}

// compareStore is the database of a comparison: a PostgreSQL DSN (each run
// on a schema of its own; for --compare BIN, any server store's) or an
// SQLite file (each run on a new file there, removed after the run).
type compareStore struct {
	// Postgres is the DSN, on PostgreSQL (or another server, against a
	// binary).
	Postgres string
	// IsSQLite is set on SQLite, where SQLite is the database file that
	// each run creates and removes (empty: one in the comparison's
	// temporary folder).
	IsSQLite bool
	SQLite   string
}

// parseCompareStore reads --store and --db for --compare: postgres://...,
// sqlite (the file from --db, or one in a temporary folder) or an SQLite URL
// (sqlite:PATH, sqlite:///ABSOLUTE/PATH).
func parseCompareStore(store, db string) (compareStore, error) {
	switch {
	case db != "" && store != "sqlite":
		return compareStore{}, fmt.Errorf("--db goes with --store sqlite, not %q", store)
	case storeflag.IsPostgres(store):
		return compareStore{Postgres: store}, nil
	case store == "sqlite":
		return compareStore{SQLite: db, IsSQLite: true}, nil
	case sqlite.IsURL(store):
		path, err := sqlite.PathFromURL(store)
		if err != nil {
			return compareStore{}, fmt.Errorf("--store: %w", err)
		}
		return compareStore{SQLite: path, IsSQLite: true}, nil
	}
	return compareStore{}, fmt.Errorf("--compare needs --store postgres://... or sqlite[:PATH], not %q", store)
}

// removeSQLite removes an SQLite database file and its WAL and
// shared-memory files, those that exist.
func removeSQLite(path string) error {
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// runCompare runs pairs of burn-downs of jobs jobs, Ratchet's in this
// process and River's through compare/river, alternating which goes
// first, each on a schema of its own (PostgreSQL) or a new file (SQLite),
// and prints the ratios.
// compareWorkers is the workers of both sides of --compare unless
// --workers says otherwise: River's MaxWorkers in River's own benchmark.
const compareWorkers = 2000

func runCompare(ctx context.Context, store, db string, jobs, workers, batch, pairs int, riverBin string, stdout, stderr io.Writer) int {
	cs, err := parseCompareStore(store, db)
	if err != nil {
		fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
		return 2
	}
	if pairs < 1 {
		fmt.Fprintln(stderr, "ratchet bench: --pairs must be at least 1")
		return 2
	}
	if cs.IsSQLite && cs.SQLite != "" {
		if _, err := os.Stat(cs.SQLite); err == nil {
			fmt.Fprintf(stderr, "ratchet bench: %s already exists; a benchmark needs a new database file\n", cs.SQLite)
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "ratchet-compare-")
	if err != nil {
		fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if riverBin == "" {
		if riverBin, err = buildRiver(ctx, dir); err != nil {
			fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
			return 1
		}
	}
	where := "PostgreSQL, a schema of each run's own"
	if cs.IsSQLite {
		if cs.SQLite == "" {
			cs.SQLite = filepath.Join(dir, "bench.db")
		}
		where = "SQLite, a new file " + cs.SQLite + " for each run"
	}
	fmt.Fprintf(stdout, "ratchet bench: burndown of %d jobs on %s, Ratchet against River (%s), %d workers each, %d pairs\n", jobs, where, riverBin, workers, pairs)
	runRatchet := func() (rates, cpuCost, error) {
		var opened *storeflag.Opened
		var err error
		if cs.IsSQLite {
			opened, err = storeflag.OpenForBench(ctx, "sqlite", cs.SQLite)
		} else {
			opened, err = storeflag.OpenForBench(ctx, cs.Postgres, "")
		}
		if err != nil {
			return rates{}, cpuCost{}, err
		}
		defer func() { _ = opened.Close() }()
		meter := newCPUMeter(machineCPU)
		res, err := bench.Run(ctx, opened.Store, bench.Config{Mode: bench.ModeBurndown, Jobs: jobs, Workers: workers, InsertBatch: batch, Progress: meter})
		if err != nil {
			return rates{}, cpuCost{}, err
		}
		return rates{Insert: res.InsertRate(), Work: res.WorkRate()}, meter.perJob(jobs), nil
	}
	runRiver := func() (rates, cpuCost, error) {
		args := []string{"--dsn", cs.Postgres, "--jobs", strconv.Itoa(jobs), "--workers", strconv.Itoa(workers)}
		if cs.IsSQLite {
			args = []string{"--sqlite", cs.SQLite, "--jobs", strconv.Itoa(jobs), "--workers", strconv.Itoa(workers)}
		}
		var out bytes.Buffer
		meter := newCPUMeter(machineCPU)
		cmd := exec.CommandContext(ctx, riverBin, args...)
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, meter), stderr
		if err := cmd.Run(); err != nil {
			return rates{}, cpuCost{}, fmt.Errorf("%s: %v\n%s", riverBin, err, out.String())
		}
		r, err := parseRiverOutput(out.String())
		return r, meter.perJob(jobs), err
	}
	var rr, rv []rates
	var cr, cv []cpuCost
	for i := range pairs {
		order := []string{"ratchet", "river"}
		if i%2 == 1 {
			order = []string{"river", "ratchet"}
		}
		for _, who := range order {
			var r rates
			var c cpuCost
			var err error
			if who == "ratchet" {
				r, c, err = runRatchet()
				rr, cr = append(rr, r), append(cr, c)
			} else {
				r, c, err = runRiver()
				rv, cv = append(rv, r), append(cv, c)
			}
			if cs.IsSQLite {
				// The next run starts on a new file.
				if rerr := removeSQLite(cs.SQLite); err == nil {
					err = rerr
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "ratchet bench: pair %d, %s: %v\n", i+1, who, err)
				return 1
			}
		}
		p := comparePair{Ratchet: rr[i], River: rv[i], InsertRatio: rr[i].Insert / rv[i].Insert, WorkRatio: rr[i].Work / rv[i].Work}
		fmt.Fprintf(stdout, "pair %d (%s first): insert %.0f / %.0f jobs/s = %.2f, work %.0f / %.0f jobs/s = %.2f%s\n", i+1, order[0],
			p.Ratchet.Insert, p.River.Insert, p.InsertRatio, p.Ratchet.Work, p.River.Work, p.WorkRatio, cpuText(cr[i], cv[i]))
	}
	res, err := comparePairs(rr, rv)
	if err != nil {
		fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "median ratio Ratchet / River over %d pairs: insert %.2f, work %.2f\n", len(res.Pairs), res.MedianInsert, res.MedianWork)
	if ins, work, ok := medianCPU(cr, cv); ok {
		fmt.Fprintf(stdout, "median ratio of machine CPU per job, River / Ratchet: insert %.2f, work %.2f\n", ins, work)
	}
	return 0
}
