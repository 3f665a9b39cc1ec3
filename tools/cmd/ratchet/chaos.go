package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest/privatedb"
)

// chaosCommand is ratchet chaos: the chaos harness (package chaos) on a
// database. Exit status 0 on a clean run, 1 on a violation (or a run that
// could not be made), 2 on a usage error. "ratchet chaos worker" is the
// probe worker that the harness starts by default (this same binary).
func chaosCommand(fs *flag.FlagSet) action {
	store := fs.String("store", "", "the database: a postgres:// or mysql:// URL, an SQLite file sqlite:PATH (kept), or sqlite for a new temporary file (removed after a clean run) (required)")
	schema := fs.String("schema", "", "the PostgreSQL schema or MySQL database of the run (default: a new one, dropped after a clean run); none on SQLite")
	duration := fs.Duration("duration", 60*time.Second, "length of the fault phase")
	quiet := fs.Duration("quiet", chaos.MaxQuiet, "longest quiet phase after the faults (at most 30s)")
	seed := fs.Uint64("seed", 0, "seed of the fault schedule and the workload (default: one taken from the clock, printed)")
	workers := fs.Int("workers", chaos.DefaultWorkers, "worker processes")
	faults := fs.String("faults", "kill,stop,term", "enabled fault kinds, of kill, stop, term, latency, reset, blackhole, skew, restart-db, failover, db-node-loss; all (every kind but the database's) or none")
	dbRestart := fs.String("db-restart", "", "restart-db's command, run with /bin/sh -c: it restarts the database and returns once it is up again (e.g. 'pg_ctlcluster 15 main restart')")
	dbFailover := fs.String("db-failover", "", "failover's command, run with /bin/sh -c: it fails the database over to its standby and returns once the new primary accepts writes; --store must reach whichever server is the primary")
	dbNodeLoss := fs.String("db-node-loss", "", "db-node-loss's command, run with /bin/sh -c: it kills one server of the database's cluster and returns at once")
	dbNodeRejoin := fs.String("db-node-rejoin", "", "db-node-loss's second command, run with /bin/sh -c: it brings the lost server back and returns once it has rejoined")
	spreadHosts := fs.Bool("spread-hosts", false, "with a --store listing several servers (mysql://user@h1,h2,h3/db), give each worker the list turned by its index, so that the workers write through different servers of a multi-primary cluster (Galera multi-writer); without it they all write through the first server that answers")
	privateDB := fs.String("private-db", "", "run on a private database made from this machine's server packages and removed afterwards, instead of --store: postgres (restart-db), postgres-standby or postgres-async (a primary and a synchronous or asynchronous standby: restart-db, failover) or galera (three MariaDB Galera nodes: db-node-loss); the harness runs the database faults itself")
	maxSkew := fs.Duration("max-skew", chaos.DefaultMaxSkew, "bound of a skew's clock offset (at most 1s)")
	jobs := fs.Int("jobs", chaos.DefaultJobs, "chaos.sleep probe jobs")
	permitJobs := fs.Int("permit-jobs", chaos.DefaultPermitJobs, "chaos.permit probe jobs (a resource of 2 permits)")
	poisonJobs := fs.Int("poison-jobs", chaos.DefaultPoisonJobs, "chaos.poison probe jobs (each kills its node until the crash budget fails it)")
	workflows := fs.Int("workflows", chaos.DefaultWorkflows, "probe workflows (diamonds of 4 chaos.step jobs)")
	schedules := fs.Int("schedules", chaos.DefaultSchedules, "probe recurring schedules (chaos.sleep every 2 s during the fault phase)")
	workload := fs.String("workload", "probe", "what to submit: probe (the probe jobs), user (the --worker binary's own workload, chaos.WithWorkload) or both")
	worker := fs.String("worker", "", "the worker binary, a program calling chaos.WorkerMain or chaos.WorkerMainWith (default: this binary's probe worker, ratchet chaos worker)")
	plant := fs.String("plant", "", "a planted store defect in the workers, to see the harness catch it: "+strings.Join(chaos.Plants, ", "))
	logs := fs.String("logs", "", "folder for the workers' logs (default: a new temporary folder)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		usageErr := func(format string, a ...any) int {
			fmt.Fprintf(stderr, "ratchet chaos: "+format+"\n", a...)
			return 2
		}
		if len(args) > 0 {
			return usageErr("unexpected arguments %q", args)
		}
		switch {
		case *store == "" && *privateDB == "":
			return usageErr("--store is required (a postgres:// or mysql:// URL, or sqlite:PATH), or --private-db")
		case *store != "" && *privateDB != "":
			return usageErr("--store and --private-db are exclusive: --private-db makes the database")
		case *privateDB != "" && !slices.Contains(privateDBKinds, *privateDB):
			return usageErr("--private-db %q: one of %s", *privateDB, strings.Join(privateDBKinds, ", "))
		case *store != "" && !chaos.Supported(*store):
			return usageErr("--store must be a postgres:// or mysql:// URL, sqlite:PATH or sqlite; other databases are not supported by the harness yet")
		}
		kinds, err := chaos.ParseFaults(*faults)
		if err != nil {
			return usageErr("%v", err)
		}
		if *privateDB == "" {
			for _, c := range []struct {
				kind     chaos.FaultKind
				flag     string
				cmd      string
				describe string
			}{
				{chaos.FaultRestartDB, "--db-restart", *dbRestart, "the command that restarts the database and returns once it is up again"},
				{chaos.FaultFailover, "--db-failover", *dbFailover, "the command that fails the database over to its standby and returns once the new primary accepts writes"},
				{chaos.FaultDBNodeLoss, "--db-node-loss", *dbNodeLoss, "the command that kills one server of the database's cluster"},
				{chaos.FaultDBNodeLoss, "--db-node-rejoin", *dbNodeRejoin, "the command that brings the lost server back and returns once it has rejoined"},
			} {
				switch on := slices.Contains(kinds, c.kind); {
				case on && strings.TrimSpace(c.cmd) == "":
					return usageErr("--faults %s needs %s CMD, %s (or use --private-db)", c.kind, c.flag, c.describe)
				case !on && c.cmd != "":
					return usageErr("%s is given but %s is not among --faults", c.flag, c.kind)
				}
			}
		} else if *dbRestart+*dbFailover+*dbNodeLoss+*dbNodeRejoin != "" {
			return usageErr("--private-db runs the database faults itself: drop --db-restart, --db-failover, --db-node-loss and --db-node-rejoin")
		}
		seedSet := false
		fs.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
		if !seedSet {
			*seed = uint64(time.Now().UnixNano() % 1_000_000)
		}
		count := func(n int) int {
			if n == 0 {
				return -1 // none, not the default
			}
			return n
		}
		sc := chaos.Scenario{
			DSN: *store, Schema: *schema, Workers: *workers, Duration: *duration, Quiet: *quiet, Seed: *seed,
			Faults: kinds, Plant: *plant, LogDir: *logs, Progress: stderr, MaxSkew: *maxSkew, SpreadHosts: *spreadHosts,
			Workload: chaos.Workload{Jobs: count(*jobs), PermitJobs: count(*permitJobs), PoisonJobs: count(*poisonJobs),
				Workflows: count(*workflows), Schedules: count(*schedules)},
		}
		for name, n := range map[string]int{"jobs": *jobs, "permit-jobs": *permitJobs, "poison-jobs": *poisonJobs, "workflows": *workflows, "schedules": *schedules} {
			if n < 0 {
				return usageErr("--%s %d: a count of at least 0", name, n)
			}
		}
		switch *workload {
		case "probe":
		case "user", "both":
			if *worker == "" {
				return usageErr("--workload %s needs --worker, a binary whose main calls chaos.WorkerMainWith(chaos.WithWorkload(fn), ...)", *workload)
			}
			sc.WorkerSubmits = true
			sc.Workload.NoProbes = *workload == "user"
		default:
			return usageErr("--workload %q: probe, user or both", *workload)
		}
		shell := func(cmd string) []string {
			if cmd == "" {
				return nil
			}
			return []string{"/bin/sh", "-c", cmd}
		}
		sc.RestartDB, sc.Failover = shell(*dbRestart), shell(*dbFailover)
		sc.DBNodeLoss, sc.DBNodeRejoin = shell(*dbNodeLoss), shell(*dbNodeRejoin)
		exe, err := os.Executable()
		if err != nil {
			return usageErr("cannot find this binary to run it as the worker or the private database's steps (%v)", err)
		}
		if *worker != "" {
			sc.Worker = []string{*worker}
		} else {
			sc.Worker = []string{exe, "chaos", "worker"}
		}
		if *quiet > chaos.MaxQuiet || *quiet <= 0 {
			return usageErr("--quiet must be above 0 and at most %s", chaos.MaxQuiet)
		}
		if *privateDB != "" {
			sc.DSN = privateDBDSN[*privateDB] // a stand-in, to check the scenario
			privateDBSteps(&sc, *privateDB, exe, "DIR")
		}
		if _, err := chaos.NewPlan(sc); err != nil {
			return usageErr("%v", err)
		}
		if *privateDB != "" {
			dir, err := os.MkdirTemp("", "ratchet-chaos-db-")
			if err != nil {
				fmt.Fprintln(stderr, "ratchet chaos:", err)
				return 1
			}
			defer func() { _ = os.Remove(dir) }()
			var dsn strings.Builder
			kind := strings.Split(*privateDB, "-")[0]
			startArgs := []string{kind, "start", dir}
			if *privateDB == "postgres-standby" {
				startArgs = append(startArgs, "standby")
			} else if *privateDB == "postgres-async" {
				startArgs = append(startArgs, "async")
			}
			fmt.Fprintf(stderr, "ratchet chaos: starting a private %s in %s\n", *privateDB, dir)
			if err := privatedb.Main(ctx, startArgs, &dsn); err != nil {
				fmt.Fprintln(stderr, "ratchet chaos: the private database:", err)
				_ = privatedb.Main(context.Background(), []string{kind, "stop", dir}, io.Discard)
				return 1
			}
			defer func() {
				if err := privatedb.Main(context.Background(), []string{kind, "stop", dir}, io.Discard); err != nil {
					fmt.Fprintln(stderr, "ratchet chaos: stopping the private database:", err)
				}
			}()
			sc.DSN = strings.TrimSpace(dsn.String())
			privateDBSteps(&sc, *privateDB, exe, dir)
		}
		fmt.Fprintf(stderr, "ratchet chaos: seed %d (rerun with --seed %d for the same schedule)\n", *seed, *seed)
		rep, err := chaos.Run(ctx, sc)
		if err != nil {
			fmt.Fprintln(stderr, "ratchet chaos:", err)
			return 1
		}
		if *jsonOut {
			_, _ = stdout.Write(rep.JSON())
		} else {
			_ = rep.WriteText(stdout)
		}
		if !rep.OK() {
			return 1
		}
		return 0
	}
}

// privateDBKinds are the private databases --private-db makes.
var privateDBKinds = []string{"postgres", "postgres-standby", "postgres-async", "galera"}

// privateDBDSN are stand-ins of the private databases' DSNs, to check a
// scenario before the database is made.
var privateDBDSN = map[string]string{
	"postgres": "postgres://127.0.0.1/postgres", "postgres-standby": "postgres://127.0.0.1/postgres",
	"postgres-async": "postgres://127.0.0.1/postgres", "galera": "mysql://127.0.0.1/test",
}

// privateDBSteps sets the scenario's database fault commands to this
// binary's hidden "chaos private-db" steps on the private database in dir.
func privateDBSteps(sc *chaos.Scenario, kind, exe, dir string) {
	step := func(args ...string) []string { return append([]string{exe, "chaos", "private-db"}, args...) }
	switch kind {
	case "galera":
		sc.DBNodeLoss, sc.DBNodeRejoin = step("galera", "kill", dir), step("galera", "rejoin", dir)
	default:
		sc.RestartDB = step("postgres", "restart", dir)
		if kind != "postgres" {
			sc.Failover = step("postgres", "failover", dir)
		}
	}
}

// chaosLong is the help of ratchet chaos.
const chaosLong = `Starts --workers worker processes on the database (PostgreSQL, MySQL 8 or
MariaDB 10.6+, or an SQLite file that they share: sqlite:PATH, or sqlite
alone for a new temporary file), submits a seeded workload
of probe jobs (sleeps, permits, a poison job, diamond workflows, a recurring
schedule every 2 s) and, with --workload user|both, the worker binary's own
(its main is chaos.WorkerMainWith(chaos.WithTasks(...),
chaos.WithWorkload(fn)); the harness runs it once with --submit), every
execution of any task recorded in the ledger; it injects a seeded schedule
of faults for --duration (SIGKILL
then a restart, SIGSTOP then SIGCONT, SIGTERM then a restart; and through a
TCP proxy between each node and the database: latency, reset connections, a
black hole, not on SQLite; a node's clock put ahead or behind by up to
--max-skew, skew; and, never by default, the database's faults: restarted
by --db-restart CMD (restart-db), failed over to its standby by
--db-failover CMD (failover), one server of its cluster killed by
--db-node-loss CMD and brought back by --db-node-rejoin CMD (db-node-loss);
one at a time, each at most 10 s), then waits a quiet phase of at most --quiet, and checks
from the database and the chaos ledger: no job lost, each job finalized
exactly once, each SUCCEEDED job's execution on record, the crash budget
exact, permits never exceeded, each recurring slot fired once, workflow
children run only after their parents succeeded, every enabled fault kind
injected. With --private-db, the harness makes the database itself from
this machine's server packages (a PostgreSQL server; a primary with a
synchronous or asynchronous standby, which failover promotes and then
replaces; three MariaDB Galera nodes, one of which db-node-loss kills and
restarts), on free ports of 127.0.0.1, and removes it afterwards; the
report gives, for each database fault, how long after it each node ran a
job again. Exit status 0 when every invariant held, 1 on a
violation (the report names the invariant and the jobs), 2 on a usage error.`

// chaosCommands is ratchet chaos, and its hidden worker (the probe worker
// the harness starts as this binary's "chaos worker").
func chaosCommands(leaf leafFunc) *cobra.Command {
	c := leaf("chaos", "real worker processes on a database under seeded kills, stops and terms; checks no job lost, finalized once, crash budget, permits", noArgs, chaosCommand)
	c.Long = chaosLong
	worker := &cobra.Command{Use: "worker", Short: "the probe worker the harness starts", Hidden: true, DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := chaos.RunWorker(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr()); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "ratchet chaos worker:", err)
				return exitStatus(1)
			}
			return nil
		}}
	c.AddCommand(worker)
	private := &cobra.Command{Use: "private-db", Short: "a step on a private database of --private-db", Hidden: true, DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := privatedb.Main(cmd.Context(), args, cmd.OutOrStdout()); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "ratchet chaos private-db:", err)
				return exitStatus(1)
			}
			return nil
		}}
	c.AddCommand(private)
	return c
}
