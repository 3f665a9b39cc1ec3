// Command mutants measures how many mutants of the engine's parts the
// engine's own tests kill, and how many the cluster simulator kills: an
// opt-in run, about half a minute per mutant on two cores, never part of
// go test.
//
// It lists the mutants of the given files with gremlins
// (github.com/go-gremlins/gremlins v0.6.0, its dry run: install it with
// go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0), writes
// each mutated file to a temporary directory and, through -overlay (the
// tree is never touched), runs against it the engine's tests (go test) and
// a seed sweep of the simulator (simtest/cmd/simtest). A mutant that does
// not compile is not viable; a test run or sweep that fails or times out
// kills it. Efficacy is killed / (killed + lived), per suite.
//
//	go run ./tools/cmd/mutants
//	go run ./tools/cmd/mutants -files internal/nodecore/completer.go -seeds 1..20 -max 10
//
// Run it from the repository root. Dependency: gremlins, run as a command
// for its mutant analysis (so no module requirement); the rewrite of each
// mutant follows its mutators (mutate.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// defaultFiles are the engine's parts: the poller (its loop, its claim step), the
// executor (its runs), the completer and the heartbeats.
const defaultFiles = "engine/poller.go,engine/executor.go,internal/nodecore/pollloop.go,internal/nodecore/claim.go,internal/nodecore/runs.go,internal/nodecore/completer.go,internal/nodecore/heartbeat.go"

// mutant is one mutation and what each suite made of it.
type mutant struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Type   string `json:"type"`
	Change string `json:"change"`
	// Viable is false for a mutant that does not compile.
	Viable bool `json:"viable"`
	// Tests and Simulator say whether each suite killed it.
	Tests     bool `json:"killed_by_tests"`
	Simulator bool `json:"killed_by_simulator"`
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	files := fs.String("files", defaultFiles, "comma-separated files to mutate, relative to the repository root")
	tests := fs.String("tests", "./engine/,./internal/nodecore/", "comma-separated packages whose tests run against each mutant")
	seeds := fs.String("seeds", "1..20", "the simulator's seed range for each mutant")
	steps := fs.Int("steps", 2000, "the simulator's main steps per seed")
	max := fs.Int("max", 0, "run at most this many mutants (0: all)")
	timeout := fs.Duration("timeout", time.Minute, "bound of each test run and sweep (a mutant that makes one hang is killed)")
	out := fs.String("out", "", "write every mutant and its outcome to this JSON file")
	gremlins := fs.String("gremlins", "", "the gremlins command (default: on PATH, or in GOPATH/bin)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if _, err := os.Stat("go.work"); err != nil {
		fmt.Fprintln(stderr, "mutants: run it from the repository root (the folder of go.work)")
		return 2
	}
	g, err := gremlinsCommand(*gremlins)
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 2
	}
	tmp, err := os.MkdirTemp("", "mutants")
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	ms, err := list(g, strings.Split(*files, ","), tmp)
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d mutants in %s\n", len(ms), *files)
	if *max > 0 && len(ms) > *max {
		ms = ms[:*max]
		fmt.Fprintf(stdout, "running the first %d\n", *max)
	}
	start := time.Now()
	for i := range ms {
		m := &ms[i]
		if err := try(m, tmp, strings.Split(*tests, ","), *seeds, *steps, *timeout); err != nil {
			fmt.Fprintln(stderr, "mutants:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%3d/%d %s:%d:%d %s (%s): %s\n", i+1, len(ms), m.File, m.Line, m.Column, m.Type, m.Change, verdict(*m))
	}
	report(stdout, ms, time.Since(start))
	if *out != "" {
		b, _ := json.MarshalIndent(ms, "", "  ")
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintln(stderr, "mutants:", err)
			return 1
		}
	}
	return 0
}

// gremlinsCommand finds the gremlins command.
func gremlinsCommand(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if p, err := exec.LookPath("gremlins"); err == nil {
		return p, nil
	}
	gopath, _ := exec.Command(goTool(), "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "gremlins")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("no gremlins command: go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0")
}

// goTool is the go command.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// dryRun is the part of gremlins' JSON output that names the mutants.
type dryRun struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// list returns the mutants of files, from a gremlins dry run of each one's
// module, in file and position order.
func list(gremlins string, files []string, tmp string) ([]mutant, error) {
	byModule := map[string][]string{}
	for _, f := range files {
		mod, err := moduleOf(f)
		if err != nil {
			return nil, err
		}
		byModule[mod] = append(byModule[mod], f)
	}
	var out []mutant
	for mod, fs := range byModule {
		report := filepath.Join(tmp, "dry-run.json")
		cmd := exec.Command(gremlins, "unleash", "--dry-run", "--silent", "-o", report, ".")
		cmd.Dir = mod
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("gremlins in %s: %v\n%s", mod, err, b)
		}
		b, err := os.ReadFile(report)
		if err != nil {
			return nil, err
		}
		var dr dryRun
		if err := json.Unmarshal(b, &dr); err != nil {
			return nil, fmt.Errorf("gremlins' report: %w", err)
		}
		for _, f := range dr.Files {
			path := filepath.ToSlash(filepath.Join(mod, f.Name))
			if !slices.Contains(fs, path) {
				continue
			}
			for _, m := range f.Mutations {
				out = append(out, mutant{File: path, Line: m.Line, Column: m.Column, Type: m.Type})
			}
		}
	}
	slices.SortFunc(out, func(a, b mutant) int {
		return strings.Compare(fmt.Sprintf("%s:%06d:%04d:%s", a.File, a.Line, a.Column, a.Type), fmt.Sprintf("%s:%06d:%04d:%s", b.File, b.Line, b.Column, b.Type))
	})
	return out, nil
}

// moduleOf returns the folder of the module that holds file.
func moduleOf(file string) (string, error) {
	if _, err := os.Stat(file); err != nil {
		return "", err
	}
	for dir := filepath.Dir(file); dir != "." && dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.ToSlash(dir), nil
		}
	}
	return "", fmt.Errorf("%s is in no module of the repository", file)
}

// try writes m's mutant and runs both suites against it.
func try(m *mutant, tmp string, tests []string, seeds string, steps int, timeout time.Duration) error {
	src, err := os.ReadFile(m.File)
	if err != nil {
		return err
	}
	mutated, change, err := mutate(src, m.Line, m.Column, m.Type)
	if err != nil {
		m.Change = "not applied: " + err.Error()
		return nil
	}
	m.Change = change
	abs, err := filepath.Abs(m.File)
	if err != nil {
		return err
	}
	file := filepath.Join(tmp, "mutant.go")
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return err
	}
	overlay := filepath.Join(tmp, "overlay.json")
	b, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	if err := os.WriteFile(overlay, b, 0o644); err != nil {
		return err
	}
	bin := filepath.Join(tmp, "simtest")
	if !succeeds(timeout, "build", "-overlay="+overlay, "-o", bin, "./simtest/cmd/simtest") {
		return nil // not viable: it does not compile
	}
	m.Viable = true
	// The suites run at once: a mutant that makes one hang holds no CPU.
	sim := make(chan bool)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		sim <- exec.CommandContext(ctx, bin, "-seeds", seeds, "-steps", fmt.Sprint(steps)).Run() != nil
	}()
	m.Tests = !succeeds(timeout+10*time.Second, append([]string{"test", "-overlay=" + overlay, "-count=1", "-timeout=" + timeout.String()}, tests...)...)
	m.Simulator = <-sim
	return nil
}

// succeeds runs the go command with args and reports whether it exited 0
// within timeout.
func succeeds(timeout time.Duration, args ...string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return exec.CommandContext(ctx, goTool(), args...).Run() == nil
}

func verdict(m mutant) string {
	switch {
	case strings.HasPrefix(m.Change, "not applied"):
		return m.Change
	case !m.Viable:
		return "not viable"
	}
	return fmt.Sprintf("tests %s, simulator %s", killed(m.Tests), killed(m.Simulator))
}

func killed(b bool) string {
	if b {
		return "killed"
	}
	return "lived"
}

// report prints, per file and in all, the viable mutants and each suite's
// kills and efficacy.
func report(w io.Writer, ms []mutant, took time.Duration) {
	type counts struct{ viable, tests, sim, either, both int }
	per := map[string]*counts{}
	var files []string
	all := &counts{}
	for _, m := range ms {
		if !m.Viable {
			continue
		}
		c := per[m.File]
		if c == nil {
			c = &counts{}
			per[m.File] = c
			files = append(files, m.File)
		}
		for _, c := range []*counts{c, all} {
			c.viable++
			if m.Tests {
				c.tests++
			}
			if m.Simulator {
				c.sim++
			}
			if m.Tests || m.Simulator {
				c.either++
			}
			if m.Tests && m.Simulator {
				c.both++
			}
		}
	}
	pct := func(n, of int) string {
		if of == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
	}
	fmt.Fprintf(w, "\n%-36s %7s %14s %14s %14s\n", "file", "viable", "tests", "simulator", "either")
	for _, f := range append(files, "all") {
		c := per[f]
		if f == "all" {
			c = all
		}
		fmt.Fprintf(w, "%-36s %7d %6d %7s %6d %7s %6d %7s\n", f, c.viable, c.tests, pct(c.tests, c.viable), c.sim, pct(c.sim, c.viable), c.either, pct(c.either, c.viable))
	}
	fmt.Fprintf(w, "%d mutants (%d viable) in %s\n", len(ms), all.viable, took.Round(time.Second))
}
