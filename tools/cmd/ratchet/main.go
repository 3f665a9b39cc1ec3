// Command ratchet is Ratchet for Go's command-line tool.
//
//	ratchet demo     run a node on a realistic mix of jobs and check the outcome
//	ratchet bench    measure throughput and latency on a store
//	ratchet migrate  apply the schema migrations to a database
//	ratchet keys     keys reencrypt: rewrite the stored values under the current key
//	ratchet jobs     jobs list|show|retry|cancel|delete: operate on jobs, by id or by filter
//	ratchet dlq      the dead-letter queue: list it, retry it
//	ratchet stats    the jobs by status, task and priority; the oldest due job
//	ratchet nodes    the live nodes, their heartbeat age and tasks
//	ratchet recurring  recurring list|pause|resume|trigger
//	ratchet archive  archive the jobs that finished long enough ago, now
//	ratchet chaos    run worker processes under a seeded fault schedule and check the invariants
//	ratchet dashboard  serve the web dashboard over a store
//	ratchet dev      a node and the dashboard on an embedded SQLite store
//
// Run it from the repository root with go run ./tools/cmd/ratchet.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var commands = []command{
	{"demo", "run a node on a realistic mix of jobs and check that each reached its expected state", runDemo},
	{"bench", "measure insert and work throughput (burndown) or enqueue-to-start latency (steady)", runBench},
	{"migrate", "apply the schema migrations to a PostgreSQL database and say what was applied", runMigrate},
	{"keys", "keys reencrypt: seal the stored values under the current encryption key (the key rotation)", runKeys},
	{"jobs", "jobs list|show|retry|cancel|delete: list, inspect, retry, cancel or delete jobs, by id or by filter", runJobs},
	{"dlq", "dlq [list|retry]: the dead-letter queue (the FAILED jobs), and retrying it", runDLQ},
	{"stats", "the jobs by status, task and priority, and how long the oldest due job has waited", runStats},
	{"nodes", "the live nodes: heartbeat age and the tasks each runs", runNodes},
	{"recurring", "recurring list|pause|resume|trigger: the recurring schedules", runRecurring},
	{"archive", "move the jobs that finished before --older-than ago into the archive now", runArchive},
	{"chaos", "real worker processes on a database under seeded kills, stops and terms; checks no job lost, finalized once, crash budget, permits", runChaos},
	{"dashboard", "serve the web dashboard over a store (--addr, a token or --user; --insecure on loopback only)", runDashboard},
	{"dev", "a node running the demo's tasks and the dashboard on an embedded SQLite store in --data, in one command", runDev},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ratchet: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ratchet <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nrun 'ratchet <command> -h' for a command's flags")
}
