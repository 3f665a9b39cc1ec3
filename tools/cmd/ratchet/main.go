// Command ratchet is Ratchet for Go's command-line tool.
//
//	ratchet demo        run a node on a realistic mix of jobs and check the outcome
//	ratchet bench       measure throughput and latency on a store
//	ratchet migrate     apply the schema migrations to a database
//	ratchet keys        keys reencrypt: rewrite the stored values under the current key
//	ratchet jobs        jobs list|show|submit|logs|retry|cancel|delete: operate on jobs, by id or by filter
//	ratchet dlq         the dead-letter queue: list it, retry it
//	ratchet stats       the jobs by status, task and priority; the oldest due job
//	ratchet nodes       the live nodes, their heartbeat age and tasks
//	ratchet recurring   recurring list|pause|resume|trigger
//	ratchet signal      signal deliver NAME --job ID | --key KEY
//	ratchet workflow    workflow show|cancel ID
//	ratchet batch       batch show|cancel ID
//	ratchet archive     archive the jobs that finished long enough ago, now
//	ratchet chaos       run worker processes under a seeded fault schedule and check the invariants
//	ratchet dashboard   serve the web dashboard over a store
//	ratchet dev         a node and the dashboard on an embedded SQLite store
//	ratchet version     the module versions and the schema versions this binary expects
//	ratchet completion  the shell completion script (bash, zsh, fish)
//
// Flags go anywhere on the line (`ratchet jobs show ID --store S`);
// RATCHET_STORE and RATCHET_SCHEMA stand for --store and --schema. The
// command tree is github.com/spf13/cobra's (see the tools module's doc).
//
// Run it from the repository root with go run ./tools/cmd/ratchet.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// action runs a command once its flags are parsed, on its positional
// arguments, and returns the exit status: 0, 1 for a failure, 2 for a
// command line that asks for nothing the command does.
type action func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// define declares a command's flags on fs and returns the action that reads
// them.
type define func(fs *flag.FlagSet) action

// leafFunc builds a command of the tree from its use line, its summary,
// the positional arguments it takes and its flags (newLeaf, bound to the
// command's output).
type leafFunc = func(use, short string, args cobra.PositionalArgs, def define) *cobra.Command

// exitStatus is an action's status other than 0: its message is already
// printed.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// envFlags are the flags the environment may set when the command line
// does not: RATCHET_STORE keeps a DSN and its password out of the shell's
// history.
var envFlags = map[string]string{"store": "RATCHET_STORE", "schema": "RATCHET_SCHEMA"}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	if len(args) == 0 {
		_ = root.Usage()
		return 2
	}
	cmd, err := root.ExecuteContextC(ctx)
	var status exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &status):
		return int(status)
	}
	path := "ratchet"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	fmt.Fprintf(stderr, "%s: %v\n", path, err)
	fmt.Fprintf(stderr, "run '%s --help' for usage\n", path)
	return 2
}

// newRoot builds the command tree, writing to stdout and stderr.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "ratchet",
		Short:         "Ratchet for Go's command-line tool: operate a job store, run a demo, a benchmark or a chaos run",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          unknownSubcommand,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Usage() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.CompletionOptions.HiddenDefaultCmd = false
	leaf := func(use, short string, args cobra.PositionalArgs, def define) *cobra.Command {
		return newLeaf(use, short, args, def, stdout, stderr)
	}
	root.AddCommand(
		leaf("demo", "run a node on a realistic mix of jobs and check that each reached its expected state", noArgs, demoCommand),
		leaf("bench", "measure insert and work throughput (burndown) or enqueue-to-start latency (steady)", noArgs, benchCommand),
		leaf("migrate", "create or migrate a database's schema (PostgreSQL, MySQL, SQL Server, Oracle, SQLite, MongoDB) and say what was applied", noArgs, migrateCommand),
		group("keys", "the encryption keys: reencrypt seals the stored values under the current key (the key rotation)",
			leaf("reencrypt", "seal every stored payload, result, state and log line, live and archived, and every schedule's arguments, under the current key", noArgs, reencryptCommand)),
		jobsCommands(leaf),
		dlqCommands(leaf),
		leaf("stats", "the jobs by status, task and priority, and how long the oldest due job has waited", noArgs, statsCommand),
		leaf("nodes", "the live nodes: heartbeat age and the tasks each runs", noArgs, nodesCommand),
		taskCommands(leaf),
		recurringCommands(leaf),
		signalCommands(leaf),
		workflowCommands(leaf),
		batchCommands(leaf),
		leaf("archive", "move the jobs that finished before --older-than ago into the archive now", noArgs, archiveCommand),
		chaosCommands(leaf),
		leaf("dashboard", "serve the web dashboard over a store (--addr, a token or --user; --insecure on loopback only)", noArgs, dashboardCommand),
		leaf("dev", "a node running the demo's tasks and the dashboard on an embedded SQLite store in --data, in one command", noArgs, devCommand),
		leaf("version", "the versions of this binary's modules and the schema versions it expects", noArgs, versionCommand),
	)
	return root
}

// newLeaf is a command that runs def's action on its positional arguments.
func newLeaf(use, short string, args cobra.PositionalArgs, def define, stdout, stderr io.Writer) *cobra.Command {
	name := strings.Fields(use)[0]
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	act := def(fs)
	c := &cobra.Command{Use: use, Short: short, Args: args}
	c.Flags().AddGoFlagSet(fs)
	for flagName, env := range envFlags {
		if f := c.Flags().Lookup(flagName); f != nil {
			f.Usage += " ($" + env + ")"
		}
	}
	c.RunE = func(cmd *cobra.Command, pos []string) error {
		// The environment's settings, then every flag the line set again
		// into fs, so that the actions' fs.Visit sees what was set.
		for flagName, env := range envFlags {
			if f := cmd.Flags().Lookup(flagName); f != nil && !f.Changed {
				if v, ok := os.LookupEnv(env); ok && v != "" {
					if err := cmd.Flags().Set(flagName, v); err != nil {
						return fmt.Errorf("$%s: %w", env, err)
					}
				}
			}
		}
		var err error
		cmd.Flags().Visit(func(f *pflag.Flag) {
			if fs.Lookup(f.Name) != nil && err == nil {
				err = fs.Set(f.Name, f.Value.String())
			}
		})
		if err != nil {
			return err
		}
		if code := act(cmd.Context(), pos, stdout, stderr); code != 0 {
			return exitStatus(code)
		}
		return nil
	}
	return c
}

// group is a command made of subcommands: alone, or followed by a word
// that is none of them, it is a usage error naming the word.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: unknownSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			return fmt.Errorf("a subcommand is needed: %s", strings.Join(names, ", "))
		}}
	c.AddCommand(subs...)
	return c
}

// unknownSubcommand refuses any argument of a command made of
// subcommands: one that named a subcommand would have run it.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
	}
	return errors.New(msg)
}

// noArgs refuses positional arguments, naming them.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q: this command takes flags only", args)
	}
	return nil
}
