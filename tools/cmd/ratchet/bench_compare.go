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

// compareWorkers is the workers of both sides of --compare unless
// --workers says otherwise: River's MaxWorkers in River's own benchmark.
const compareWorkers = 2000

// compareRun is what --compare river was asked for.
type compareRun struct {
	store, db                   string
	jobs, workers, batch, pairs int
	riverBin                    string
	// mix adds the mixed shape to the one-task one (mixShapes).
	mix bool
}

// compareShape is the backlog of one kind of pair: Ratchet's tasks and
// priorities (bench.Config), River's kinds and priorities (compare/river's
// --kinds and --priorities, whose job i gets priority (i mod P) mod 4 + 1).
type compareShape struct {
	// tag names the shape in the lines of a comparison of several shapes.
	tag                         string
	tasks, priorities           int
	riverKinds, riverPriorities int
}

// The shapes of --compare river: one task, and with --mix the mixed
// backlog of River's InsertMany: job i of every insert call with task
// (kind) i mod 10 and priority i mod 5 (River: 1 to 4).
var (
	oneTaskShape = compareShape{tag: "one task", tasks: 1, priorities: 1, riverKinds: 1, riverPriorities: 1}
	mixShape     = compareShape{tag: "mix 10x5", tasks: 10, priorities: 5, riverKinds: 10, riverPriorities: 5}
)

// riverArgs are compare/river's flags of a shape (none for one kind at
// one priority, so that an older --river-bin runs it).
func (sh compareShape) riverArgs() []string {
	var args []string
	if sh.riverKinds > 1 {
		args = append(args, "--kinds", strconv.Itoa(sh.riverKinds))
	}
	if sh.riverPriorities > 1 {
		args = append(args, "--priorities", strconv.Itoa(sh.riverPriorities))
	}
	return args
}

// shapeRuns are the runs of one shape: each side's rates and machine CPU
// per job, one per pair, in pair order.
type shapeRuns struct {
	shape                compareShape
	ratchet, river       []rates
	ratchetCPU, riverCPU []cpuCost
}

// copyRuns are the server COPY references of Ratchet's one-task runs:
// the COPY's rate and Ratchet's insert rate over it, one per run.
type copyRuns struct{ rates, ratios []float64 }

// compareLines are the lines that end a comparison: per shape the median
// ratios Ratchet / River (tagged with the shape's name when tagged), with
// several shapes the mix's work rate over the one task's (Ratchet's
// medians, the first shape the one task and the second the mix), the
// median insert / server COPY when copies were measured, and per shape
// the median of River's CPU per job over Ratchet's when every pair was
// measured.
func compareLines(runs []shapeRuns, tagged bool, copies copyRuns) ([]string, error) {
	tag := func(sh compareShape) string { return tagOf(sh, tagged) }
	var lines []string
	for _, r := range runs {
		res, err := comparePairs(r.ratchet, r.river)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.shape.tag, err)
		}
		lines = append(lines, fmt.Sprintf("median ratio%s Ratchet / River over %d pairs: insert %.2f, work %.2f", tag(r.shape), len(res.Pairs), res.MedianInsert, res.MedianWork))
	}
	if len(runs) == 2 {
		one, mixed := workRates(runs[0].ratchet), workRates(runs[1].ratchet)
		lines = append(lines, fmt.Sprintf("%s / %s, Ratchet's work rate (medians): %.2f", runs[1].shape.tag, runs[0].shape.tag, median(mixed)/median(one)))
	}
	if len(copies.ratios) > 0 {
		lines = append(lines, fmt.Sprintf("insert / server COPY: %.2f (Ratchet's insert%s over the server's own COPY of the same rows, median of %d runs; the COPY %.0f rows/s)",
			median(copies.ratios), tag(runs[0].shape), len(copies.ratios), median(copies.rates)))
	}
	for _, r := range runs {
		if ins, work, ok := medianCPU(r.ratchetCPU, r.riverCPU); ok {
			lines = append(lines, fmt.Sprintf("median ratio of machine CPU per job%s, River / Ratchet: insert %.2f, work %.2f", tag(r.shape), ins, work))
		}
	}
	return lines, nil
}

// workRates are the work rates of rs.
func workRates(rs []rates) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Work
	}
	return out
}

// runCompare runs pairs of burn-downs of c.jobs jobs, Ratchet's in this
// process and River's through compare/river, alternating which goes
// first, each on a schema of its own (PostgreSQL) or a new file (SQLite),
// and prints the ratios; with c.mix, a pair of each shape in turn, the
// shapes' order alternating too (the first run of the process starts it
// cold), so that both shapes meet the same drift of the machine. On
// PostgreSQL, Ratchet's one-task runs time the server's own
// COPY of their rows between the phases, then both sides run a CHECKPOINT
// there (Ratchet's mixed runs and River's runs the CHECKPOINT alone), so
// that every work phase starts with nothing left to flush.
func runCompare(ctx context.Context, c compareRun, stdout, stderr io.Writer) int {
	cs, err := parseCompareStore(c.store, c.db)
	if err != nil {
		fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
		return 2
	}
	if c.pairs < 1 {
		fmt.Fprintln(stderr, "ratchet bench: --pairs must be at least 1")
		return 2
	}
	if c.mix && cs.IsSQLite {
		fmt.Fprintln(stderr, "ratchet bench: --mix runs on PostgreSQL (--store postgres://...)")
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
	riverBin := c.riverBin
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
	shapes := []compareShape{oneTaskShape}
	of := ""
	if c.mix {
		shapes = append(shapes, mixShape)
		of = " of each shape: one task, and mix 10x5 (Ratchet: job i of every insert call of task i mod 10 at priority i mod 5; River: --kinds 10 --priorities 5)"
	}
	fmt.Fprintf(stdout, "ratchet bench: burndown of %d jobs on %s, Ratchet against River (%s), %d workers each, %d pairs%s\n", c.jobs, where, riverBin, c.workers, c.pairs, of)
	var copies copyRuns
	runRatchet := func(sh compareShape) (rates, cpuCost, error) {
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
		cfg := bench.Config{Mode: bench.ModeBurndown, Jobs: c.jobs, Workers: c.workers, InsertBatch: c.batch, Tasks: sh.tasks, Priorities: sh.priorities, Progress: meter}
		var copyRate float64
		if opened.CopyReference != nil {
			into := &copyRate
			if sh != oneTaskShape {
				into = nil // the CHECKPOINT alone
			}
			cfg.AfterInsert = betweenPhases(opened, c.batch, meter, into)
		}
		res, err := bench.Run(ctx, opened.Store, cfg)
		if err != nil {
			return rates{}, cpuCost{}, err
		}
		if copyRate > 0 {
			copies.rates, copies.ratios = append(copies.rates, copyRate), append(copies.ratios, res.InsertRate()/copyRate)
		}
		return rates{Insert: res.InsertRate(), Work: res.WorkRate()}, meter.perJob(c.jobs), nil
	}
	runRiver := func(sh compareShape) (rates, cpuCost, error) {
		args := []string{"--dsn", cs.Postgres, "--checkpoint"}
		if cs.IsSQLite {
			args = []string{"--sqlite", cs.SQLite}
		}
		args = append(append(args, "--jobs", strconv.Itoa(c.jobs), "--workers", strconv.Itoa(c.workers), "--insert-batch", strconv.Itoa(c.batch)), sh.riverArgs()...)
		var out bytes.Buffer
		meter := newCPUMeter(machineCPU)
		cmd := exec.CommandContext(ctx, riverBin, args...)
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, meter), stderr
		if err := cmd.Run(); err != nil {
			return rates{}, cpuCost{}, fmt.Errorf("%s: %v\n%s", riverBin, err, out.String())
		}
		r, err := parseRiverOutput(out.String())
		return r, meter.perJob(c.jobs), err
	}
	runs := make([]shapeRuns, len(shapes))
	for k, sh := range shapes {
		runs[k].shape = sh
	}
	for i := range c.pairs {
		order, shapeOrder := pairOrder(i, len(shapes))
		for _, k := range shapeOrder {
			sh, sr := shapes[k], &runs[k]
			for _, who := range order {
				var r rates
				var cost cpuCost
				var err error
				if who == "ratchet" {
					r, cost, err = runRatchet(sh)
					sr.ratchet, sr.ratchetCPU = append(sr.ratchet, r), append(sr.ratchetCPU, cost)
				} else {
					r, cost, err = runRiver(sh)
					sr.river, sr.riverCPU = append(sr.river, r), append(sr.riverCPU, cost)
				}
				if cs.IsSQLite {
					// The next run starts on a new file.
					if rerr := removeSQLite(cs.SQLite); err == nil {
						err = rerr
					}
				}
				if err != nil {
					fmt.Fprintf(stderr, "ratchet bench: pair %d%s, %s: %v\n", i+1, tagOf(sh, c.mix), who, err)
					return 1
				}
			}
			a, b := sr.ratchet[i], sr.river[i]
			fmt.Fprintf(stdout, "pair %d%s (%s first): insert %.0f / %.0f jobs/s = %.2f, work %.0f / %.0f jobs/s = %.2f%s\n", i+1, tagOf(sh, c.mix), order[0],
				a.Insert, b.Insert, a.Insert/b.Insert, a.Work, b.Work, a.Work/b.Work, cpuText(sr.ratchetCPU[i], sr.riverCPU[i]))
		}
	}
	lines, err := compareLines(runs, c.mix, copies)
	if err != nil {
		fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
		return 1
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return 0
}

// pairOrder is the order of the runs of pair i (from 0) of a comparison
// of shapes shapes: which side goes first, and which shape (their
// indexes), both alternating from one pair to the next.
func pairOrder(i, shapes int) (sides []string, shapeOrder []int) {
	sides = []string{"ratchet", "river"}
	shapeOrder = make([]int, shapes)
	for j := range shapeOrder {
		shapeOrder[j] = j
	}
	if i%2 == 1 {
		slices.Reverse(sides)
		slices.Reverse(shapeOrder)
	}
	return sides, shapeOrder
}

// tagOf is the shape's tag in a pair's line: " [one task]", or nothing
// when the comparison has one shape.
func tagOf(sh compareShape, tagged bool) string {
	if !tagged {
		return ""
	}
	return " [" + sh.tag + "]"
}
