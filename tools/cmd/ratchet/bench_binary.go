package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// bench --compare BIN: this binary's burn-down against another ratchet
// binary's (a previous commit's), alternately, each run a process of its
// own on a schema, database or file of its own (any --store a burn-down
// takes), so that every "not slower" claim is
// measured the same way: the ratios of the rates (this / BIN) and of the
// machine's CPU time per job (this / BIN: below 1 is cheaper), with their
// medians over the pairs.

// selfBinary is the path of this binary (tests replace it).
var selfBinary = os.Executable

// runCompareBinary runs pairs of burn-downs, this binary's and bin's,
// alternating which goes first, and prints each pair and the medians.
func runCompareBinary(ctx context.Context, store, db string, jobs, workers, batch, pairs int, bin string, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "ratchet bench: "+format+"\n", a...)
		return code
	}
	cs, err := parseCompareStore(store, db)
	if err != nil && db == "" {
		// Any other store: each run opens a schema or database of its
		// own, as a burn-down does.
		cs, err = compareStore{Postgres: store}, nil
	}
	if err != nil {
		return fail(2, "%v", err)
	}
	if pairs < 1 {
		return fail(2, "--pairs must be at least 1")
	}
	if _, err := os.Stat(bin); err != nil {
		return fail(2, "--compare %s: not a ratchet binary: %v", bin, err)
	}
	self, err := selfBinary()
	if err != nil {
		return fail(1, "this binary's path: %v", err)
	}
	dir, err := os.MkdirTemp("", "ratchet-compare-")
	if err != nil {
		return fail(1, "%v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if cs.IsSQLite && cs.SQLite == "" {
		cs.SQLite = filepath.Join(dir, "bench.db")
	}
	// Neither side times the server's COPY between the phases (nor runs
	// the CHECKPOINT after it), so that both work phases start alike, a
	// binary from before --server-copy included.
	noCopy := map[string]bool{self: true, bin: hasServerCopy(ctx, bin)}
	run := func(exe string) (rates, cpuCost, error) {
		args := []string{"bench", "--jobs", strconv.Itoa(jobs), "--workers", strconv.Itoa(workers), "--insert-batch", strconv.Itoa(batch)}
		if cs.IsSQLite {
			args = append(args, "--store", "sqlite", "--db", cs.SQLite)
		} else {
			args = append(args, "--store", cs.Postgres)
		}
		if noCopy[exe] {
			args = append(args, "--server-copy=false")
		}
		var out bytes.Buffer
		meter := newCPUMeter(machineCPU)
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, meter), stderr
		err := cmd.Run()
		if cs.IsSQLite {
			if rerr := removeSQLite(cs.SQLite); err == nil {
				err = rerr
			}
		}
		if err != nil {
			return rates{}, cpuCost{}, fmt.Errorf("%s: %v\n%s", exe, err, out.String())
		}
		r, err := parseRates(out.String(), "insert ")
		return r, meter.perJob(jobs), err
	}
	fmt.Fprintf(stdout, "ratchet bench: burndown of %d jobs, this binary against %s, %d workers each, %d pairs\n", jobs, bin, workers, pairs)
	var ins, work, cpuIns, cpuWork []float64
	cpuKnown := true
	for i := range pairs {
		order := []string{self, bin}
		if i%2 == 1 {
			order = []string{bin, self}
		}
		got := map[string]rates{}
		cost := map[string]cpuCost{}
		for _, exe := range order {
			r, c, err := run(exe)
			if err != nil {
				return fail(1, "pair %d: %v", i+1, err)
			}
			got[exe], cost[exe] = r, c
		}
		a, b := got[self], got[bin]
		ins, work = append(ins, a.Insert/b.Insert), append(work, a.Work/b.Work)
		line := fmt.Sprintf("pair %d (%s first): insert %.0f / %.0f jobs/s = %.3f, work %.0f / %.0f jobs/s = %.3f", i+1,
			map[bool]string{true: "this", false: "BIN"}[order[0] == self], a.Insert, b.Insert, a.Insert/b.Insert, a.Work, b.Work, a.Work/b.Work)
		if ca, cb := cost[self], cost[bin]; ca.known() && cb.known() {
			us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
			ri, rw := float64(ca.Insert)/float64(cb.Insert), float64(ca.Work)/float64(cb.Work)
			cpuIns, cpuWork = append(cpuIns, ri), append(cpuWork, rw)
			line += fmt.Sprintf("; machine CPU per job: insert %.1f / %.1f µs = %.3f, work %.1f / %.1f µs = %.3f", us(ca.Insert), us(cb.Insert), ri, us(ca.Work), us(cb.Work), rw)
		} else {
			cpuKnown = false
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "median ratio this / BIN over %d pairs: insert %.3f, work %.3f jobs/s\n", pairs, median(ins), median(work))
	if cpuKnown {
		fmt.Fprintf(stdout, "median ratio of machine CPU per job, this / BIN: insert %.3f, work %.3f (below 1: cheaper)\n", median(cpuIns), median(cpuWork))
	}
	return 0
}

// hasServerCopy reports whether the ratchet binary bin knows bench's
// --server-copy flag (its bench --help lists it).
func hasServerCopy(ctx context.Context, bin string) bool {
	out, _ := exec.CommandContext(ctx, bin, "bench", "--help").CombinedOutput()
	return bytes.Contains(out, []byte("--server-copy"))
}
