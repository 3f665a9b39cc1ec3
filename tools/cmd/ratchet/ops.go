package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ratchet-go/ratchet/encryption"
	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The operator commands: ratchet jobs, dlq, stats, nodes and recurring,
// over any store, with tables for people and --json for scripts. Lists
// page by keyset (--after, the previous page's next id), never by a count
// of the table.

// opsFlags are the flags every operator command shares.
type opsFlags struct {
	fs                 *flag.FlagSet
	store, schema, db  string
	json               bool
	status, task       string
	createdFrom, until string
	since, before      string
	property           string
	tag, priority, due string
	errorText          string
	limit              int
	after              string
	archived           bool
	wide               bool
	// coordinator and cluster name the fleet's cluster coordinator, told
	// of the command's writes at once (cliNotifier).
	coordinator, cluster string
}

func newOpsFlags(fs *flag.FlagSet, filters bool) *opsFlags {
	f := &opsFlags{fs: fs}
	f.fs.StringVar(&f.store, "store", "", "the store: a postgres://... DSN, a mysql://..., sqlserver://..., oracle://... or mongodb://... URL, or sqlite:PATH")
	f.fs.StringVar(&f.schema, "schema", postgres.DefaultSchema, "PostgreSQL schema")
	f.fs.StringVar(&f.db, "db", "", "SQLite database file for --store sqlite")
	f.fs.BoolVar(&f.json, "json", false, "write JSON instead of a table")
	f.fs.StringVar(&f.coordinator, "coordinator", "", "the fleet's cluster coordinator (redis://host:port or nats://host:port): told at once of cancels of RUNNING jobs, retries and submissions, so that nodes act on them without waiting for their next heartbeat or poll")
	f.fs.StringVar(&f.cluster, "cluster", "default", "the coordinator's cluster name (the nodes' ratchetredis/ratchetnats Options.Cluster)")
	if filters {
		f.fs.StringVar(&f.status, "status", "", "only jobs in this state (PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, BLOCKED, SKIPPED, WAITING)")
		f.fs.StringVar(&f.task, "task", "", "only jobs of this task")
		f.fs.StringVar(&f.createdFrom, "created-from", "", "only jobs created at or after this time (RFC 3339, or a duration ago: 90m, 2h, 7d)")
		f.fs.StringVar(&f.until, "created-before", "", "only jobs created before this time (RFC 3339, or a duration ago: 90m, 2h, 7d)")
		f.fs.StringVar(&f.since, "since", "", "only jobs created within this long before now (90m, 2h, 7d): --created-from relative")
		f.fs.StringVar(&f.before, "until", "", "only jobs created more than this long before now (90m, 2h, 7d): --created-before relative")
		f.fs.StringVar(&f.property, "property", "", "only jobs with this property, KEY=VALUE")
		f.fs.StringVar(&f.tag, "tag", "", "only jobs carrying this tag")
		f.fs.StringVar(&f.due, "due", "", "only jobs due now (now) or scheduled later (later): with --status PENDING, what waits for a node or for its time")
		f.fs.StringVar(&f.priority, "priority", "", "only jobs of these priorities, comma-separated (LOWEST, LOW, NORMAL, HIGH, CRITICAL)")
		f.fs.StringVar(&f.errorText, "error", "", "only jobs whose last error contains this text, ignoring case (with --created-from/--created-before: within a time range)")
		f.fs.IntVar(&f.limit, "limit", 50, "jobs per page (list)")
		f.fs.StringVar(&f.after, "after", "", "list the page after this job id (the previous page's next)")
		f.fs.BoolVar(&f.archived, "archived", false, "list: the archived jobs too, merged in id order")
		f.fs.BoolVar(&f.wide, "wide", false, "list: every column (crashes, created) and whole errors, whatever the terminal's width")
	}
	return f
}

// listOptions returns the filters as the client's ListOptions; a filter
// that does not parse is an error naming its flag.
func (f *opsFlags) listOptions() (ratchet.ListOptions, error) {
	now := time.Now().UTC()
	from, err := when("created-from", f.createdFrom, "since", f.since, now)
	if err != nil {
		return ratchet.ListOptions{}, err
	}
	before, err := when("created-before", f.until, "until", f.before, now)
	if err != nil {
		return ratchet.ListOptions{}, err
	}
	jf := ratchet.JobFilter{Status: f.status, Task: f.task, Tag: f.tag, ErrorContains: f.errorText,
		CreatedFrom: from, CreatedBefore: before, Property: f.property, Archived: f.archived, Due: f.due}
	if f.priority != "" {
		jf.Priorities = []string{f.priority}
	}
	o, err := jf.ListOptions()
	var fe *ratchet.FilterError
	if errors.As(err, &fe) {
		return o, fmt.Errorf("--%s %q: %s", strings.ReplaceAll(fe.Field, "_", "-"), fe.Value, fe.Reason)
	}
	if err != nil {
		return o, err
	}
	o.Limit = f.limit
	if f.after != "" {
		if o.After, err = uuid.Parse(f.after); err != nil {
			return o, fmt.Errorf("--after %q: %w", f.after, err)
		}
	}
	return o, nil
}

// when is the time of an absolute flag (RFC 3339, or a duration ago) or
// of its relative twin (a duration ago), as RFC 3339; "" when neither is
// set. Both set is an error naming them.
func when(absName, abs, relName, rel string, now time.Time) (string, error) {
	switch {
	case abs != "" && rel != "":
		return "", fmt.Errorf("--%s and --%s say the same thing: give one", absName, relName)
	case rel != "":
		d, err := agoOf(rel)
		if err != nil {
			return "", fmt.Errorf("--%s %q: %w", relName, rel, err)
		}
		return now.Add(-d).Format(time.RFC3339Nano), nil
	case abs == "":
		return "", nil
	}
	if _, err := time.Parse(time.RFC3339Nano, abs); err == nil {
		return abs, nil
	}
	d, err := agoOf(abs)
	if err != nil {
		return "", fmt.Errorf("--%s %q: not an RFC 3339 time (2026-12-06T09:00:00Z) nor a duration ago (90m, 2h, 7d)", absName, abs)
	}
	return now.Add(-d).Format(time.RFC3339Nano), nil
}

// agoOf parses a positive duration: Go's (90m, 1h30m) or whole days (7d).
func agoOf(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		if days, err = strconv.Atoi(n); err == nil {
			d = time.Duration(days) * 24 * time.Hour
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, errors.New("want a positive duration: 90m, 2h, 7d")
	}
	return d, nil
}

// text is the filters as the command line gave them, for people and the
// audit log: "--task report.build --status PENDING".
func (f *opsFlags) text() string {
	var parts []string
	for _, p := range []struct{ name, v string }{{"status", f.status}, {"task", f.task}, {"tag", f.tag}, {"priority", f.priority},
		{"error", f.errorText}, {"created-from", f.createdFrom}, {"created-before", f.until}, {"since", f.since},
		{"until", f.before}, {"property", f.property}} {
		if p.v != "" {
			parts = append(parts, "--"+p.name+" "+strconv.Quote(p.v))
		}
	}
	if len(parts) == 0 {
		return "(every job)"
	}
	return strings.Join(parts, " ")
}

// filteredBeyondStatus reports whether a filter other than --status is set.
func (f *opsFlags) filteredBeyondStatus() bool {
	g := *f
	g.status = ""
	return g.filtered()
}

// filtered reports whether any filter is set (a bulk action by filter
// needs one).
func (f *opsFlags) filtered() bool {
	return f.status != "" || f.task != "" || f.createdFrom != "" || f.until != "" || f.since != "" || f.before != "" || f.property != "" ||
		f.tag != "" || f.priority != "" || f.errorText != ""
}

// open opens the store and a client on it that masks payloads and, when
// RATCHET_ENCRYPTION_KEYS is set, opens sealed values with those keys;
// with --coordinator, the client tells the fleet of its writes through it
// (warnings to stderr). Closing the store closes the coordinator too.
func (f *opsFlags) open(ctx context.Context, stderr io.Writer) (*storeflag.Opened, *ratchet.Client, error) {
	if f.store == "" {
		return nil, nil, errors.New("--store is required")
	}
	opts := ratchet.ClientOptions{MaskPayloads: true}
	if os.Getenv(encryption.EnvKeysVar) != "" {
		keys, err := encryption.EnvKeys()
		if err != nil {
			return nil, nil, err
		}
		codec, err := encryption.NewCodec(keys, encryption.Options{})
		if err != nil {
			return nil, nil, err
		}
		opts.Codecs = []ratchet.PayloadCodec{codec}
	}
	var coord spi.ClusterCoordinator
	if f.coordinator != "" {
		open, _, err := coordinatorOpener(f.coordinator, f.cluster, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err != nil {
			return nil, nil, fmt.Errorf("--coordinator: %w", err)
		}
		if coord, err = open(ctx); err != nil {
			return nil, nil, fmt.Errorf("--coordinator: %w", err)
		}
		pub, ok := coord.(wakeupPublisher)
		if !ok {
			_ = coord.Close()
			return nil, nil, fmt.Errorf("--coordinator: %T cannot publish at once", coord)
		}
		opts.Notifier = cliNotifier{pub: pub, stderr: stderr}
	}
	st, err := storeflag.Open(ctx, f.store, f.db, f.schema, false)
	if err == nil && coord != nil {
		closeStore := st.Close
		st.Close = func() error { return errors.Join(closeStore(), coord.Close()) }
	}
	if err != nil {
		if coord != nil {
			_ = coord.Close()
		}
		return nil, nil, storeflag.OpenError(f.store, err)
	}
	c, err := ratchet.NewClient(st.Store, opts)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return st, c, nil
}

// opsFunc is the body of an operator command, on its store and a client.
type opsFunc func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, args []string, stdout, stderr io.Writer) error

// opsCommand is an operator command's action: it opens the store and runs
// fn, turning its error into the exit status 1 (2 for a usage error) with
// the command's name.
func opsCommand(name string, f *opsFlags, fn opsFunc) action {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return opsRun(ctx, name, f, args, stdout, stderr, fn)
	}
}

func opsRun(ctx context.Context, name string, f *opsFlags, args []string, stdout, stderr io.Writer, fn opsFunc) int {
	st, c, err := f.open(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ratchet %s: %v\n", name, err)
		return 1
	}
	defer func() { _ = st.Close() }()
	if st.Warning != "" {
		fmt.Fprintf(stderr, "ratchet %s: warning: %s\n", name, st.Warning)
	}
	if err := fn(ctx, st, c, args, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "ratchet %s: %v\n", name, err)
		var usage usageError
		if errors.As(err, &usage) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is a command line that asks for nothing the command does.
type usageError string

func (e usageError) Error() string { return string(e) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneLine is s on one line, for a table cell.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// termWidth is the width of w when it is a terminal, else 0 (tests
// replace it).
var termWidth = func(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// clip shortens s to n runes for a table cell.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// jobsCommands is `ratchet jobs list|show|retry|cancel|delete`.
func jobsCommands(leaf leafFunc) *cobra.Command {
	return group("jobs", "list, inspect, submit, retry, cancel or delete jobs, by id or by filter; read their logs",
		leaf("list", "a page of jobs (filters: --status --task --tag --priority --error --created-from --created-before --since --until --property; --after for the next page; --wide for every column)", noArgs, jobsList("jobs list", "")),
		leaf("show ID", "one job: its masked arguments and result, its attempts and crash count, its log", cobra.ExactArgs(1), jobsShow),
		leaf("retry [ID...]", "move FAILED jobs back to PENDING: the ids given, or every job the filters match (shown first; asks, or --yes; --dry-run: only show)", cobra.ArbitraryArgs, jobsBulk("jobs retry", ratchet.BulkRetry, "")),
		leaf("cancel [ID...]", "cancel PENDING, BLOCKED, WAITING or RUNNING jobs (a running body's context is cancelled on its node): the ids given, or every job the filters match (shown first; asks, or --yes; --dry-run: only show)", cobra.ArbitraryArgs, jobsBulk("jobs cancel", ratchet.BulkCancel, "")),
		leaf("delete [ID...]", "delete finished jobs for good (not parents of unfinished jobs, nor children of open batches): ids, or filters (asks, or --yes)", cobra.ArbitraryArgs, jobsBulk("jobs delete", ratchet.BulkDelete, "")),
		leaf("submit TASK", "submit a job of TASK with the JSON of --args (through the payload limit and the codecs)", cobra.ExactArgs(1), jobsSubmit),
		leaf("logs ID", "the job's log; --follow prints the lines as they come, until the job has finished", cobra.ExactArgs(1), jobsLogs))
}

// dlqCommands is `ratchet dlq [list|retry]`: the jobs commands over the
// FAILED jobs (the dead-letter queue); alone, dlq lists.
func dlqCommands(leaf leafFunc) *cobra.Command {
	c := leaf("dlq", "the dead-letter queue (the FAILED jobs): list it (the default), or retry it", unknownSubcommand, jobsList("dlq list", spi.StatusFailed))
	c.AddCommand(
		leaf("list", "a page of the dead-letter queue, the FAILED jobs", noArgs, jobsList("dlq list", spi.StatusFailed)),
		leaf("retry [ID...]", "move them back to PENDING: the ids given, or every one the filters match (shown first; asks, or --yes; --dry-run: only show)", cobra.ArbitraryArgs, jobsBulk("dlq retry", ratchet.BulkRetry, spi.StatusFailed)))
	return c
}

// jobsList lists jobs (of status, when not empty: the DLQ's).
func jobsList(name string, status spi.Status) define {
	return func(fs *flag.FlagSet) action {
		f := newOpsFlags(fs, true)
		return opsCommand(name, f, func(ctx context.Context, _ *storeflag.Opened, c *ratchet.Client, _ []string, stdout, _ io.Writer) error {
			if status != "" {
				f.status = string(status)
			}
			return listJobs(ctx, c, f, stdout)
		})
	}
}

// jobsShow shows one job.
func jobsShow(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("jobs show", f, func(ctx context.Context, _ *storeflag.Opened, c *ratchet.Client, ids []string, stdout, _ io.Writer) error {
		id, err := jobID(ctx, c, ids[0])
		if err != nil {
			return err
		}
		return notFound(showJob(ctx, c, id, f.json, stdout), "job", id.String())
	})
}

// notFound names the thing an operator asked for, once, when the store
// does not have it (instead of the store's and the client's wrapped
// errors); other errors pass as they are.
func notFound(err error, noun, id string) error {
	if errors.Is(err, ratchet.ErrNotFound) {
		return fmt.Errorf("%s %s not found", noun, id)
	}
	return err
}

// jobsBulk retries, cancels or deletes jobs (of status, when not empty:
// the DLQ's).
func jobsBulk(name string, act ratchet.BulkAction, status spi.Status) define {
	return func(fs *flag.FlagSet) action {
		f := newOpsFlags(fs, true)
		b := bulkRun{f: f, action: act}
		fs.BoolVar(&b.dry, "dry-run", false, "only count the jobs the filters match, and show some")
		fs.BoolVar(&b.yes, "yes", false, "change the jobs the filters match without asking (required off a terminal)")
		fs.IntVar(&b.workers, "workers", ratchet.DefaultBulkWorkers, "jobs (for delete: batches of 500) changed at once")
		return opsCommand(name, f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, ids []string, stdout, stderr io.Writer) error {
			if status != "" {
				f.status = string(status)
			}
			return b.run(ctx, st, c, ids, stdout, stderr)
		})
	}
}

func listJobs(ctx context.Context, c *ratchet.Client, f *opsFlags, stdout io.Writer) error {
	o, err := f.listOptions()
	if err != nil {
		return usageError(err.Error())
	}
	page, err := c.ListJobs(ctx, o)
	if err == nil {
		err = c.MaskJobs(ctx, page.Jobs) // as jobs show masks
	}
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(stdout, jobjson.PageOf(page))
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if f.wide {
		fmt.Fprintln(tw, "ID\tTASK\tSTATUS\tPRIORITY\tATTEMPTS\tCRASHES\tCREATED\tDUE\tERROR")
		for _, j := range page.Jobs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d\t%s\t%s\t%s\n", j.ID, j.TaskName, j.Status, j.Priority,
				j.Attempts, j.MaxRetries+1, j.CrashCount, stamp(j.CreatedAt), stamp(j.ScheduledAt), oneLine(j.LastError))
		}
	} else {
		// The columns an on-call engineer reads first. On a terminal, the
		// ids short (every command takes them back) and the error cut to
		// what is left of its width; elsewhere whole ids, 60 characters
		// of error.
		room, idLen := 60, 36
		if w := termWidth(stdout); w > 0 {
			ids := make([]uuid.UUID, len(page.Jobs))
			task := 4
			for i, j := range page.Jobs {
				ids[i], task = j.ID, max(task, len(j.TaskName))
			}
			idLen = shortIDs(ids)
			room = max(w-(idLen+2+task+2+9+2+8+2+8+2+20+2), 16)
		}
		fmt.Fprintln(tw, "ID\tTASK\tSTATUS\tPRIORITY\tATTEMPTS\tDUE\tERROR")
		for _, j := range page.Jobs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID.String()[:idLen], j.TaskName, j.Status, j.Priority,
				j.Attempts, j.MaxRetries+1, stamp(j.ScheduledAt), clip(j.LastError, room))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(page.Jobs) == 0:
		fmt.Fprintln(stdout, "no jobs match")
	case page.Next != uuid.Nil:
		fmt.Fprintf(stdout, "next page: --after %s\n", page.Next)
	}
	return nil
}

func showJob(ctx context.Context, c *ratchet.Client, id uuid.UUID, asJSON bool, stdout io.Writer) error {
	d, err := c.JobDetail(ctx, id)
	if err != nil {
		return err
	}
	logs, err := c.JobLogs(ctx, id, ratchet.LogCursor{}, 1000)
	if errors.Is(err, ratchet.ErrUnsupported) {
		logs, err = nil, nil
	}
	if err != nil {
		return err
	}
	steps, err := c.JobSteps(ctx, id)
	if err != nil && !errors.Is(err, ratchet.ErrUnsupported) {
		return err
	}
	attempts, err := c.Attempts(ctx, id)
	if err != nil && !errors.Is(err, ratchet.ErrUnsupported) {
		return err
	}
	if asJSON {
		return writeJSON(stdout, jobView{jobjson.Of(d.Job), d.Arguments, d.Result, d.Masked, jobjson.LogsOf(logs), jobjson.AttemptsOf(attempts), steps, d.Waiting})
	}
	j := d.Job
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("id", j.ID.String())
	row("task", j.TaskName)
	row("status", string(j.Status))
	if w := d.Waiting; w != nil {
		row("waiting", string(w.Kind)+": "+w.Detail)
	}
	row("priority", j.Priority.String())
	row("attempts", fmt.Sprintf("%d failed of at most %d runs", j.Attempts, j.MaxRetries+1))
	row("crash count", fmt.Sprint(j.CrashCount))
	if j.Snoozes > 0 {
		row("snoozes", fmt.Sprintf("%d of at most %d", j.Snoozes, spi.MaxSnoozes(j)))
	}
	row("created", stamp(j.CreatedAt))
	row("due", stamp(j.ScheduledAt))
	row("claimed", stamp(j.ClaimedAt))
	row("finished", stamp(j.FinishedAt))
	if by, ok := spi.StartBy(j); ok {
		row("start by", stamp(by))
	}
	if t := jobjson.RunTimeout(j); t != "" {
		row("run timeout", t)
	}
	if w := jobjson.Signal(j.Signal); w != "" {
		row("signal", w)
	}
	if len(steps) > 0 {
		row("durable steps", jobjson.Steps(steps))
	}
	if j.OwnerNode != "" {
		row("node", j.OwnerNode)
	}
	if len(j.Tags) > 0 {
		row("tags", strings.Join(j.Tags, ", "))
	}
	if j.WorkflowID != uuid.Nil {
		row("workflow", j.WorkflowID.String())
	}
	if j.LastError != "" {
		row("last error", j.LastError)
	}
	masked := ""
	if d.Masked {
		masked = " (masked)"
	}
	if len(j.Params) > 0 {
		var ps []string
		for _, k := range slices.Sorted(maps.Keys(j.Params)) {
			ps = append(ps, k+"="+j.Params[k])
		}
		row("params"+masked, strings.Join(ps, " "))
	}
	row("arguments"+masked, string(d.Arguments))
	if d.Result != nil {
		row("result"+masked, string(d.Result))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(attempts) > 0 {
		fmt.Fprintln(stdout, "\nattempts:")
		aw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, a := range jobjson.AttemptsOf(attempts) {
			took := ""
			if a.Duration != nil {
				took = "took " + time.Duration(*a.Duration*float64(time.Second)).Round(time.Millisecond).String()
			}
			started := "-"
			if a.Started != nil {
				started = a.Started.Format(time.RFC3339Nano)
			}
			fmt.Fprintf(aw, "  claim %d\t%s\t%s\t%s\t%s\t%s\n", a.ClaimSeq, cmp.Or(a.Node, "-"), started, took, a.Outcome, a.Error)
		}
		if err := aw.Flush(); err != nil {
			return err
		}
	}
	if len(logs) > 0 {
		fmt.Fprintln(stdout, "\nlog:")
		for _, l := range logs {
			fmt.Fprintf(stdout, "  run %d  %s  %-5s  %s\n", l.Run, l.Time.UTC().Format(time.RFC3339Nano), l.Level, l.Message)
		}
	}
	return nil
}

// statsCommand is `ratchet stats`: the jobs by status, task and priority and
// the oldest due job (the store's spi.StatsReader).
func statsCommand(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("stats", f, func(ctx context.Context, st *storeflag.Opened, _ *ratchet.Client, _ []string, stdout, _ io.Writer) error {
		r := spi.CapabilitiesOf(st.Store).Stats
		if r == nil {
			return fmt.Errorf("%s reports no job stats (no spi.StatsReader)", st.Desc)
		}
		now := time.Now().UTC()
		s, err := r.JobStats(ctx, now)
		if err != nil {
			return err
		}
		byStatus := map[spi.Status]int64{}
		for _, jc := range s.Counts {
			byStatus[jc.Status] += jc.N
		}
		if f.json {
			out := statsView{Counts: []countView{}, ByStatus: byStatus, Estimated: s.Estimated}
			for _, jc := range s.Counts {
				out.Counts = append(out.Counts, countView{Status: jc.Status, Task: jc.Task, Priority: jc.Priority.String(), Jobs: jc.N})
			}
			if !s.OldestDue.IsZero() {
				age := now.Sub(s.OldestDue).Seconds()
				out.OldestDue, out.OldestDueAge = &s.OldestDue, &age
			}
			return writeJSON(stdout, out)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "STATUS\tTASK\tPRIORITY\tJOBS")
		for _, jc := range s.Counts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", jc.Status, jc.Task, jc.Priority, jc.N)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		var parts []string
		for _, status := range []spi.Status{spi.StatusPending, spi.StatusRunning, spi.StatusWaiting, spi.StatusBlocked,
			spi.StatusSucceeded, spi.StatusFailed, spi.StatusCancelled, spi.StatusSkipped} {
			if n := byStatus[status]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", status, n))
			}
		}
		if len(parts) == 0 {
			parts = []string{"no jobs"}
		}
		est := ""
		if s.Estimated {
			est = " (estimated from a sample of a large table)"
		}
		fmt.Fprintf(stdout, "\n%s%s\n", strings.Join(parts, ", "), est)
		if s.OldestDue.IsZero() {
			fmt.Fprintln(stdout, "no job is due")
		} else {
			fmt.Fprintf(stdout, "oldest due job: due %s ago\n", now.Sub(s.OldestDue).Round(time.Second))
		}
		return nil
	})
}

// nodesCommand is `ratchet nodes`: the live nodes, their heartbeat's age and
// the tasks each runs.
func nodesCommand(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	within := fs.Duration("within", time.Hour, "nodes whose heartbeat is at most this old")
	return opsCommand("nodes", f, func(ctx context.Context, st *storeflag.Opened, _ *ratchet.Client, _ []string, stdout, _ io.Writer) error {
		nt := spi.CapabilitiesOf(st.Store).Nodes
		if nt == nil {
			return fmt.Errorf("%s records no nodes' tasks (no spi.NodeTaskStore)", st.Desc)
		}
		now := time.Now().UTC()
		nodes, err := nt.LiveNodes(ctx, now.Add(-*within))
		if err != nil {
			return err
		}
		if f.json {
			type reportView struct {
				Version      string  `json:"version"`
				Concurrency  int     `json:"concurrency"`
				Running      int     `json:"running"`
				UptimeSecs   float64 `json:"uptime_seconds"`
				OpenBreakers int     `json:"open_breakers"`
			}
			type nodeView struct {
				ID        string      `json:"id"`
				Heartbeat time.Time   `json:"heartbeat"`
				AgeSecs   float64     `json:"heartbeat_age_seconds"`
				Tasks     []string    `json:"tasks"`
				Report    *reportView `json:"report,omitempty"`
			}
			out := []nodeView{}
			for _, n := range nodes {
				v := nodeView{ID: n.ID, Heartbeat: n.Heartbeat, AgeSecs: now.Sub(n.Heartbeat).Seconds(), Tasks: n.Tasks}
				if r := n.Report; r != nil {
					v.Report = &reportView{Version: r.Version, Concurrency: r.Concurrency, Running: r.Running,
						UptimeSecs: now.Sub(r.StartedAt).Seconds(), OpenBreakers: openBreakers(r)}
				}
				out = append(out, v)
			}
			return writeJSON(stdout, out)
		}
		if len(nodes) == 0 {
			fmt.Fprintf(stdout, "no node has beaten within %s\n", *within)
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tHEARTBEAT AGE\tVERSION\tRUNNING\tUPTIME\tOPEN BREAKERS\tTASKS")
		for _, n := range nodes {
			tasks := strings.Join(n.Tasks, ", ")
			if n.Tasks == nil {
				tasks = "(any: not recorded)"
			}
			version, running, uptime, open := "-", "-", "-", "-"
			if r := n.Report; r != nil {
				version, running = r.Version, fmt.Sprintf("%d/%d", r.Running, r.Concurrency)
				uptime, open = now.Sub(r.StartedAt).Round(time.Second).String(), fmt.Sprint(openBreakers(r))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.ID, now.Sub(n.Heartbeat).Round(time.Millisecond), version, running, uptime, open, tasks)
		}
		return tw.Flush()
	})
}

// openBreakers counts the breakers of a node's report that are not
// CLOSED.
func openBreakers(r *spi.NodeReport) int {
	n := 0
	for _, b := range r.Breakers {
		if b.State != "CLOSED" {
			n++
		}
	}
	return n
}

// recurringCommands is `ratchet recurring list|pause|resume|trigger`.
func recurringCommands(leaf leafFunc) *cobra.Command {
	return group("recurring", "the recurring schedules: list, pause, resume, trigger",
		leaf("list", "the recurring schedules: task, definition, next and last fire, paused", noArgs, recurringList),
		leaf("pause SCHEDULE-ID", "stop a schedule firing (its slots are skipped until it resumes)", cobra.ExactArgs(1), recurringPause("pause")),
		leaf("resume SCHEDULE-ID", "let a paused schedule fire again", cobra.ExactArgs(1), recurringPause("resume")),
		leaf("trigger SCHEDULE-ID", "fire a schedule now, outside its slots, and print the job's id", cobra.ExactArgs(1), recurringTrigger))
}

func recurringList(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("recurring list", f, func(ctx context.Context, _ *storeflag.Opened, c *ratchet.Client, _ []string, stdout, _ io.Writer) error {
		ss, err := c.ListSchedules(ctx)
		if err != nil {
			return err
		}
		if f.json {
			type scheduleView struct {
				ID           string     `json:"id"`
				Task         string     `json:"task"`
				Expr         string     `json:"expr"`
				Zone         string     `json:"zone,omitempty"`
				Paused       bool       `json:"paused"`
				NextFireAt   time.Time  `json:"next_fire_at"`
				LastFireAt   *time.Time `json:"last_fire_at,omitempty"`
				LastJobID    *uuid.UUID `json:"last_job_id,omitempty"`
				Skipped      int64      `json:"skipped"`
				Unregistered bool       `json:"unregistered"`
			}
			out := []scheduleView{}
			for _, s := range ss {
				v := scheduleView{ID: s.ID, Task: s.Task, Expr: s.Definition.Expr, Zone: s.Definition.Zone, Paused: s.Paused,
					NextFireAt: s.NextFireAt, Skipped: s.Skipped, Unregistered: s.Unregistered}
				if !s.LastFireAt.IsZero() {
					v.LastFireAt, v.LastJobID = &s.LastFireAt, &s.LastJobID
				}
				out = append(out, v)
			}
			return writeJSON(stdout, out)
		}
		if len(ss) == 0 {
			fmt.Fprintln(stdout, "no recurring schedules")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTASK\tDEFINITION\tNEXT FIRE\tLAST FIRE\tSKIPPED\tSTATE")
		for _, s := range ss {
			state := "active"
			switch {
			case s.Paused:
				state = "paused"
			case s.Unregistered:
				state = "no live node runs its task"
			}
			def := s.Definition.Expr
			if s.Definition.Zone != "" {
				def += " (" + s.Definition.Zone + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.ID, s.Task, def, stamp(s.NextFireAt), stamp(s.LastFireAt), s.Skipped, state)
		}
		return tw.Flush()
	})
}

// recurringPause pauses or resumes a schedule (sub: "pause" or "resume").
func recurringPause(sub string) define {
	return func(fs *flag.FlagSet) action {
		f := newOpsFlags(fs, false)
		return opsCommand("recurring "+sub, f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, ids []string, stdout, stderr io.Writer) error {
			id := ids[0]
			var err error
			if sub == "pause" {
				err = c.PauseSchedule(ctx, id)
			} else {
				err = c.ResumeSchedule(ctx, id)
			}
			if err != nil {
				return notFound(err, "schedule", strconv.Quote(id))
			}
			audit(ctx, st, "schedule."+sub, id, 0, sub+"d (ratchet command)", stderr)
			fmt.Fprintf(stdout, "schedule %s %sd\n", id, sub)
			return nil
		})
	}
}

func recurringTrigger(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	return opsCommand("recurring trigger", f, func(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, ids []string, stdout, stderr io.Writer) error {
		id := ids[0]
		job, err := c.TriggerSchedule(ctx, id)
		if err != nil {
			return notFound(err, "schedule", strconv.Quote(id))
		}
		audit(ctx, st, "schedule.trigger", id, 1, "fired: job "+job.String()+" (ratchet command)", stderr)
		if f.json {
			return writeJSON(stdout, triggerView{Schedule: id, Job: job})
		}
		fmt.Fprintf(stdout, "schedule %s fired: job %s\n", id, job)
		return nil
	})
}

// archiveCommand is `ratchet archive`: move the jobs that finished before
// --older-than ago into the archive now, batch after batch, as the
// archiver service does on its schedule.
func archiveCommand(fs *flag.FlagSet) action {
	f := newOpsFlags(fs, false)
	older := fs.Duration("older-than", 7*24*time.Hour, "archive the jobs that finished at least this long ago")
	batch := fs.Int("batch", 1000, "jobs moved per transaction")
	return opsCommand("archive", f, func(ctx context.Context, st *storeflag.Opened, _ *ratchet.Client, _ []string, stdout, stderr io.Writer) error {
		a := spi.CapabilitiesOf(st.Store).Archive
		if a == nil {
			return fmt.Errorf("%s keeps no archive (no spi.JobArchiver)", st.Desc)
		}
		if *older < 0 || *batch <= 0 {
			return usageError("--older-than must not be negative and --batch must be positive")
		}
		before := time.Now().UTC().Add(-*older)
		var bar *progressbar.ProgressBar
		if terminal(stderr) {
			bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("archived"),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("jobs"),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }))
			defer func() { _ = bar.Finish() }()
		}
		total := 0
		for {
			n, err := a.ArchiveJobs(ctx, before, *batch)
			total += n
			if bar != nil {
				_ = bar.Add(n)
			}
			if err != nil {
				audit(ctx, st, "jobs.archive", "finished before "+before.Format(time.RFC3339), total, "stopped: "+err.Error()+" (ratchet command)", stderr)
				return fmt.Errorf("after %d jobs archived: %w", total, err)
			}
			if n < *batch {
				break
			}
		}
		audit(ctx, st, "jobs.archive", "finished before "+before.Format(time.RFC3339), total, "archived (ratchet command)", stderr)
		if f.json {
			return writeJSON(stdout, archiveView{Archived: total, FinishedBefore: before})
		}
		fmt.Fprintf(stdout, "%d jobs archived (finished before %s)\n", total, before.Format(time.RFC3339))
		return nil
	})
}
