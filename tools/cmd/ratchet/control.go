package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The commands for the rest of the client's capabilities: submitting a
// job, following its log, delivering a signal, and showing or cancelling
// a workflow or a batch. Each change is written to the audit log.

// jobsSubmit is `ratchet jobs submit TASK --args JSON`: one job, through
// the client's payload pipeline (the size limit, the codecs of
// RATCHET_ENCRYPTION_KEYS, the insert middleware's checks).
func jobsSubmit(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	args := fs.String("args", "{}", "the task's arguments, as JSON")
	priority := fs.String("priority", "", "LOWEST, LOW, NORMAL, HIGH or CRITICAL (default: NORMAL)")
	delay := fs.Duration("delay", 0, "run no sooner than this long from now")
	at := fs.String("at", "", "run no sooner than this time (RFC 3339)")
	tags := fs.String("tags", "", "tags, comma-separated")
	key := fs.String("key", "", "an idempotency key: a job already submitted under it is not submitted again")
	retries := fs.Int("max-retries", -1, "retries after the first run (default: the client's, 3)")
	var params multiFlag
	fs.Var(&params, "param", "a param KEY=VALUE (repeat for more)")
	return opsCommand("jobs submit", f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, pos []string, stdout, stderr io.Writer) error {
		task := pos[0]
		if !json.Valid([]byte(*args)) {
			return usageError(fmt.Sprintf("--args %q is not JSON", *args))
		}
		var opts []ratchet.SubmitOption
		if *priority != "" {
			p, err := ratchet.ParsePriority(*priority)
			if err != nil {
				return usageError(fmt.Sprintf("--priority %q: %v", *priority, err))
			}
			opts = append(opts, ratchet.WithPriority(p))
		}
		switch {
		case *delay != 0 && *at != "":
			return usageError("--delay and --at say the same thing: give one")
		case *delay != 0:
			opts = append(opts, ratchet.WithDelay(*delay))
		case *at != "":
			t, err := time.Parse(time.RFC3339Nano, *at)
			if err != nil {
				return usageError(fmt.Sprintf("--at %q: not an RFC 3339 time", *at))
			}
			opts = append(opts, ratchet.At(t))
		}
		if *tags != "" {
			opts = append(opts, ratchet.WithTags(strings.Split(*tags, ",")...))
		}
		if *key != "" {
			opts = append(opts, ratchet.WithIdempotencyKey(*key))
		}
		if *retries >= 0 {
			opts = append(opts, ratchet.WithMaxRetries(*retries))
		}
		for _, p := range params {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return usageError(fmt.Sprintf("--param %q: want KEY=VALUE", p))
			}
			opts = append(opts, ratchet.WithParam(k, v))
		}
		id, err := c.SubmitRaw(ctx, task, []byte(*args), opts...)
		if err != nil {
			return err
		}
		audit(ctx, st, "jobs.submit", id.String(), 1, "task "+task+" (ratchet command)", stderr)
		if f.json {
			return writeJSON(stdout, submittedView{ID: id, Task: task})
		}
		fmt.Fprintf(stdout, "submitted job %s of %s\n", id, task)
		return nil
	})
}

// multiFlag is a flag given any number of times.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// jobsLogs is `ratchet jobs logs ID [--follow]`: the job's log; with
// --follow, the lines as they come, until the job has finished and its
// last lines are read (or the command is interrupted).
func jobsLogs(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	follow := fs.Bool("follow", false, "print the lines as they come, until the job has finished")
	every := fs.Duration("interval", time.Second, "--follow: how often to read the log")
	return opsCommand("jobs logs", f, func(ctx context.Context, _ *storeflag.Opened, c *ratchet.Client, pos []string, stdout, _ io.Writer) error {
		id, err := jobID(ctx, c, pos[0])
		if err != nil {
			return err
		}
		if _, err := c.GetJob(ctx, id); err != nil {
			return notFound(err, "job", id.String())
		}
		var after ratchet.LogCursor
		var all []ratchet.LogLine
		for {
			lines, err := c.JobLogs(ctx, id, after, 1000)
			if err != nil {
				return err
			}
			for _, l := range lines {
				switch {
				case f.json && *follow:
					if err := json.NewEncoder(stdout).Encode(jobjson.LogsOf([]ratchet.LogLine{l})[0]); err != nil {
						return err
					}
				case f.json:
					all = append(all, l)
				default:
					fmt.Fprintf(stdout, "run %d  %s  %-5s  %s\n", l.Run, l.Time.UTC().Format(time.RFC3339Nano), l.Level, l.Message)
				}
				after = l.After()
			}
			if len(lines) == 1000 {
				continue // a full page: read on at once
			}
			if !*follow {
				break
			}
			j, err := c.GetJob(ctx, id)
			if err == nil && j.Status.Terminal() && len(lines) == 0 {
				return nil // finished, and its last lines read
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(*every):
			}
		}
		if f.json {
			return writeJSON(stdout, jobjson.LogsOf(all))
		}
		return nil
	})
}

// signalCommands is `ratchet signal deliver NAME --job ID | --key KEY`.
func signalCommands(leaf leafFunc) *cobra.Command {
	return group("signal", "the signals jobs wait for: deliver one",
		leaf("deliver NAME", "deliver the signal NAME, with a JSON --payload, to the job of --job that waits for it, or to every job waiting for it under --key", cobra.ExactArgs(1), signalDeliver))
}

func signalDeliver(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	job := fs.String("job", "", "the job that waits for the signal")
	key := fs.String("key", "", "every job waiting for the signal under this key (ratchet.WithSignalKey)")
	payload := fs.String("payload", "", "the signal's payload, as JSON (default: none)")
	return opsCommand("signal deliver", f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, pos []string, stdout, stderr io.Writer) error {
		name := pos[0]
		var body any
		if *payload != "" {
			if !json.Valid([]byte(*payload)) {
				return usageError(fmt.Sprintf("--payload %q is not JSON", *payload))
			}
			body = json.RawMessage(*payload)
		}
		out := signalView{Signal: name, Jobs: []uuid.UUID{}}
		switch {
		case (*job == "") == (*key == ""):
			return usageError("give --job ID or --key KEY: the job that waits, or the key its wait is under")
		case *job != "":
			id, err := jobID(ctx, c, *job)
			if err != nil {
				return err
			}
			if err := c.Signal(ctx, id, name, body); err != nil {
				if errors.Is(err, ratchet.ErrInvalidState) {
					return fmt.Errorf("job %s does not wait for the signal %q (it is not WAITING for it, or its wait ended)", id, name)
				}
				return notFound(err, "job", id.String())
			}
			out.Delivered, out.Jobs = 1, []uuid.UUID{id}
		default:
			n, err := c.SignalByKey(ctx, *key, name, body)
			if err != nil {
				return err
			}
			out.Delivered, out.Key = n, *key
		}
		target := *job
		if *key != "" {
			target = "key " + *key
		}
		audit(ctx, st, "signal.deliver", target, out.Delivered, "signal "+name+" (ratchet command)", stderr)
		if f.json {
			return writeJSON(stdout, out)
		}
		fmt.Fprintf(stdout, "signal %s delivered to %d jobs\n", name, out.Delivered)
		return nil
	})
}

// workflowCommands is `ratchet workflow show|cancel ID`.
func workflowCommands(leaf leafFunc) *cobra.Command {
	return group("workflow", "a workflow: show its jobs, or cancel it",
		leaf("show ID", "the workflow's jobs, live and archived, with their states", cobra.ExactArgs(1), workflowShow),
		leaf("cancel ID", "cancel every job of the workflow that has not finished (RUNNING ones are fenced out)", cobra.ExactArgs(1), workflowCancel))
}

func workflowShow(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("workflow show", f, func(ctx context.Context, _ *storeflag.Opened, c *ratchet.Client, pos []string, stdout, _ io.Writer) error {
		id, err := uuid.Parse(pos[0])
		if err != nil {
			return usageError(fmt.Sprintf("workflow id %q: %v", pos[0], err))
		}
		ws, err := c.Workflow(ctx, id)
		if err != nil {
			return notFound(err, "workflow", id.String())
		}
		if f.json {
			v := workflowView{ID: ws.ID, Done: ws.Done, Counts: ws.Counts, Jobs: make([]jobjson.Job, 0, len(ws.Jobs))}
			for _, j := range ws.Jobs {
				v.Jobs = append(v.Jobs, jobjson.Of(j))
			}
			return writeJSON(stdout, v)
		}
		state := "running"
		if ws.Done {
			state = "done"
		}
		fmt.Fprintf(stdout, "workflow %s: %d jobs, %s (%s)\n", ws.ID, len(ws.Jobs), state, countsText(ws.Counts))
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTASK\tSTATUS\tATTEMPTS\tFINISHED\tERROR")
		for _, j := range ws.Jobs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID, j.TaskName, j.Status, j.Attempts, j.MaxRetries+1, stamp(j.FinishedAt), clip(j.LastError, 60))
		}
		return tw.Flush()
	})
}

func workflowCancel(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("workflow cancel", f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, pos []string, stdout, stderr io.Writer) error {
		id, err := uuid.Parse(pos[0])
		if err != nil {
			return usageError(fmt.Sprintf("workflow id %q: %v", pos[0], err))
		}
		if _, err := c.Workflow(ctx, id); err != nil {
			return notFound(err, "workflow", id.String())
		}
		n, err := c.CancelWorkflow(ctx, id)
		if err != nil {
			return err
		}
		audit(ctx, st, "workflow.cancel", id.String(), n, "cancelled (ratchet command)", stderr)
		if f.json {
			return writeJSON(stdout, cancelledView{ID: id, Cancelled: n})
		}
		fmt.Fprintf(stdout, "workflow %s: %d jobs cancelled\n", id, n)
		return nil
	})
}

// batchCommands is `ratchet batch show|cancel ID`.
func batchCommands(leaf leafFunc) *cobra.Command {
	return group("batch", "a batch: show its counts, or cancel it",
		leaf("show ID", "the batch: its children by status, whether it is sealed, how it ended", cobra.ExactArgs(1), batchShow),
		leaf("cancel ID", "end an open batch CANCELLED and cancel its unfinished children (no callback)", cobra.ExactArgs(1), batchCancel))
}

func batchShow(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("batch show", f, func(ctx context.Context, _ *storeflag.Opened, c *ratchet.Client, pos []string, stdout, _ io.Writer) error {
		id, err := uuid.Parse(pos[0])
		if err != nil {
			return usageError(fmt.Sprintf("batch id %q: %v", pos[0], err))
		}
		b, err := c.Batch(ctx, id)
		if err != nil {
			return notFound(err, "batch", id.String())
		}
		v := batchView{ID: b.ID, Name: b.Name, CreatedAt: b.CreatedAt, Persisted: b.Persisted, Sealed: b.Sealed,
			Counts: b.Counts, Archived: b.Archived, Outcome: string(b.Outcome)}
		if !b.FinishedAt.IsZero() {
			v.FinishedAt = &b.FinishedAt
		}
		if b.CallbackID != uuid.Nil {
			v.CallbackID = &b.CallbackID
		}
		if f.json {
			return writeJSON(stdout, v)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
		row("id", b.ID.String())
		if b.Name != "" {
			row("name", b.Name)
		}
		row("created", stamp(b.CreatedAt))
		row("children", fmt.Sprintf("%d written, sealed %v", b.Persisted, b.Sealed))
		row("by status", countsText(b.Counts))
		if b.Archived > 0 {
			row("archived", fmt.Sprint(b.Archived))
		}
		outcome := "open"
		if b.Done() {
			outcome = fmt.Sprintf("%s at %s", b.Outcome, stamp(b.FinishedAt))
		}
		row("outcome", outcome)
		if b.CallbackID != uuid.Nil {
			row("callback", b.CallbackID.String())
		}
		return tw.Flush()
	})
}

func batchCancel(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("batch cancel", f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, pos []string, stdout, stderr io.Writer) error {
		id, err := uuid.Parse(pos[0])
		if err != nil {
			return usageError(fmt.Sprintf("batch id %q: %v", pos[0], err))
		}
		n, err := c.CancelBatch(ctx, id)
		if errors.Is(err, ratchet.ErrInvalidState) {
			return fmt.Errorf("batch %s has ended: only an open batch can be cancelled", id)
		}
		if err != nil {
			return notFound(err, "batch", id.String())
		}
		audit(ctx, st, "batch.cancel", id.String(), n, "cancelled (ratchet command)", stderr)
		if f.json {
			return writeJSON(stdout, cancelledView{ID: id, Cancelled: n})
		}
		fmt.Fprintf(stdout, "batch %s cancelled: %d children cancelled\n", id, n)
		return nil
	})
}

// countsText is counts by status as text: "SUCCEEDED 3, FAILED 1".
func countsText(counts map[ratchet.Status]int) string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
	}
	if len(parts) == 0 {
		return "no jobs"
	}
	return strings.Join(parts, ", ")
}
