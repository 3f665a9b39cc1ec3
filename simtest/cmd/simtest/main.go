package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/simtest/cluster"
	"github.com/ratchet-go/ratchet/simtest/internal/mutant"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Int64("seed", 1, "the seed of a single run")
	seeds := fs.String("seeds", "", "sweep a range of seeds, FROM..TO inclusive (e.g. 1..500)")
	steps := fs.Int("steps", 2000, "main-phase steps per run")
	nodes := fs.Int("nodes", 0, "virtual nodes (0: the seed picks 2..4)")
	slots := fs.Int("slots", 0, "slots per node (0: the seed picks 1..4 per node)")
	maxCrash := fs.Int("max-crash", 0, "crash budget (0: the seed picks 0..3; negative: 0)")
	grace := fs.Duration("grace", 0, "orphan grace period (default 5s)")
	heartbeat := fs.Duration("heartbeat", 0, "heartbeat interval (default 1s)")
	drain := fs.Duration("drain", 0, "graceful-stop drain timeout (0: the seed picks one below the grace)")
	boost := fs.Duration("boost", 0, "priority boost interval (default 5s; negative disables aging)")
	aging := fs.String("aging", "auto", "aging probe: auto, on or off")
	noFaults := fs.Bool("no-faults", false, "inject no faults")
	noTags := fs.Bool("no-tags", false, "no tag affinity (nodes accept every job)")
	permits := fs.Bool("permits", false, "give some jobs resource permits")
	noRecurring := fs.Bool("no-recurring", false, "no recurring schedule (by default one seed in two has one)")
	noWorkflows := fs.Bool("no-workflows", false, "no workflows (by default about one arrival in five is a small workflow)")
	noSignals := fs.Bool("no-signals", false, "no jobs waiting for signals (by default about one arrival in eight)")
	noBatches := fs.Bool("no-batches", false, "no batches (by default about one arrival in ten is a batch)")
	noUnique := fs.Bool("no-unique", false, "no unique, debounced or rate-limited submissions (by default about one ordinary arrival in four is unique or debounced, one in seven rate-limited)")
	noTaskLimits := fs.Bool("no-task-limits", false, "no per-task limits (by default one node in three with two slots or more limits a task)")
	trace := fs.Bool("trace", false, "print the full event trace of a single run")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "seeds run at once in a sweep")
	broken := fs.String("mutant", "", "plant a deliberately broken store to show it is caught: "+strings.Join(mutant.Names(), ", "))
	engineBug := fs.String("engine-bug", "", "plant a bug in the engine's own code to show it is caught (a build with -tags ratchet_bugs): "+strings.Join(cluster.EngineBugs(), ", "))
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sc := cluster.Scenario{
		Steps: *steps, Nodes: *nodes, Slots: *slots, MaxCrashRedeliveries: *maxCrash,
		OrphanGrace: *grace, HeartbeatInterval: *heartbeat, DrainTimeout: *drain, BoostInterval: *boost,
		KeepTrace: *trace, NoTags: *noTags, Permits: *permits, EngineBug: *engineBug, NoRecurring: *noRecurring,
		NoWorkflows: *noWorkflows, NoSignals: *noSignals, NoBatches: *noBatches, NoUnique: *noUnique, NoTaskLimits: *noTaskLimits,
	}
	if *engineBug != "" && cluster.EngineBugInvariant(*engineBug) == "" {
		fmt.Fprintf(stderr, "simtest: -engine-bug: unknown engine bug %q (known: %s)\n", *engineBug, strings.Join(cluster.EngineBugs(), ", "))
		return 2
	}
	if *engineBug != "" && !cluster.BugsPlantable {
		fmt.Fprintf(stderr, "simtest: -engine-bug: the engine bugs are guards that only a build with -tags ratchet_bugs compiles: go run -tags ratchet_bugs ./simtest/cmd/simtest %s\n", strings.Join(args, " "))
		return 2
	}
	switch *aging {
	case "auto":
	case "on":
		sc.Aging = cluster.AgingOn
	case "off":
		sc.Aging = cluster.AgingOff
	default:
		fmt.Fprintf(stderr, "simtest: -aging must be auto, on or off, not %q\n", *aging)
		return 2
	}
	if *noFaults {
		sc.Faults = &cluster.FaultRates{}
	}
	if *broken != "" {
		wrap, err := mutant.Get(*broken)
		if err != nil {
			fmt.Fprintf(stderr, "simtest: -mutant: %v\n", err)
			return 2
		}
		sc.WrapStore = wrap
	}
	if *seeds == "" {
		return single(*seed, sc, stdout, stderr)
	}
	from, to, err := parseRange(*seeds)
	if err != nil {
		fmt.Fprintf(stderr, "simtest: -seeds: %v\n", err)
		return 2
	}
	sc.KeepTrace = false
	return sweep(from, to, max(1, *parallel), sc, stdout)
}

func single(seed int64, sc cluster.Scenario, stdout, stderr io.Writer) int {
	start := time.Now()
	rep, err := cluster.Simulate(seed, sc)
	if sc.KeepTrace {
		for _, l := range rep.Trace {
			fmt.Fprintln(stdout, l)
		}
	}
	fmt.Fprint(stdout, rep.Summary())
	fmt.Fprintf(stdout, "wall time %s\n", time.Since(start).Round(time.Millisecond))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, "all invariants held")
	return 0
}

func sweep(from, to int64, parallel int, sc cluster.Scenario, stdout io.Writer) int {
	start := time.Now()
	n := int(to - from + 1)
	errs := make([]error, n)
	reps := make([]cluster.Report, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				reps[i], errs[i] = cluster.Simulate(from+int64(i), sc)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	failed, steps, checks, faults := 0, 0, 0, 0
	for i, err := range errs {
		steps += reps[i].Steps
		for _, c := range reps[i].Checks {
			checks += c
		}
		for _, f := range reps[i].Faults {
			faults += f
		}
		if err == nil {
			continue
		}
		failed++
		var v *cluster.Violation
		if errors.As(err, &v) {
			fmt.Fprintf(stdout, "FAIL seed %d: %s\n", v.Seed, err)
		} else {
			fmt.Fprintf(stdout, "FAIL seed %d: %v\n", from+int64(i), err)
		}
	}
	fmt.Fprintf(stdout, "swept seeds %d..%d: %d runs, %d steps, %d faults, %d invariant checks, %d failed, wall time %s\n",
		from, to, n, steps, faults, checks, failed, time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		return 1
	}
	return 0
}

func parseRange(s string) (int64, int64, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not FROM..TO", s)
	}
	from, err := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	to, err := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err != nil {
		return 0, 0, err
	}
	if to < from {
		return 0, 0, fmt.Errorf("%q: TO is below FROM", s)
	}
	return from, to, nil
}
