package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// taskCommands are the commands of tasks fleet-wide: pause, resume and the
// paused ones.
func taskCommands(leaf leafFunc) *cobra.Command {
	return group("task", "pause or resume a task fleet-wide, list the paused ones",
		leaf("pause TASK", "stop every node claiming the task's jobs until it is resumed (submissions still wait PENDING; running jobs run on)", cobra.ExactArgs(1), taskPause("pause")),
		leaf("resume TASK", "let the nodes claim a paused task's jobs again", cobra.ExactArgs(1), taskPause("resume")),
		leaf("paused", "the paused tasks and since when", noArgs, taskPaused))
}

// taskPause pauses or resumes a task (sub: "pause" or "resume").
func taskPause(sub string) define {
	return func(fs *flag.FlagSet) action {
		f := newOpsFlags(fs, false)
		return opsCommand("task "+sub, f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, args []string, stdout, stderr io.Writer) error {
			task := args[0]
			var err error
			if sub == "pause" {
				err = c.PauseTask(ctx, task)
			} else {
				err = c.ResumeTask(ctx, task)
			}
			if err != nil {
				return err
			}
			audit(ctx, st, "task."+sub, task, 0, sub+"d (ratchet command)", stderr)
			if f.json {
				return writeJSON(stdout, map[string]string{"task": task, "state": sub + "d"})
			}
			fmt.Fprintf(stdout, "task %s %sd\n", task, sub)
			return nil
		})
	}
}

func taskPaused(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("task paused", f, func(ctx context.Context, _ *storeflag.Opened, c *ratchet.Client, _ []string, stdout, _ io.Writer) error {
		paused, err := c.PausedTasks(ctx)
		if err != nil {
			return err
		}
		if f.json {
			type view struct {
				Task  string    `json:"task"`
				Since time.Time `json:"since"`
			}
			out := []view{}
			for _, p := range paused {
				out = append(out, view{p.Task, p.Since})
			}
			return writeJSON(stdout, out)
		}
		if len(paused) == 0 {
			fmt.Fprintln(stdout, "no task is paused")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tPAUSED SINCE")
		for _, p := range paused {
			fmt.Fprintf(tw, "%s\t%s\n", p.Task, stamp(p.Since))
		}
		return tw.Flush()
	})
}
