package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/google/uuid"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// The terminal the bulk commands ask on: stdin for the answer, and whether
// stdin and stderr are a terminal (tests replace them).
var (
	stdin    io.Reader = os.Stdin
	terminal           = func(stderr io.Writer) bool {
		f, ok := stderr.(*os.File)
		return ok && term.IsTerminal(int(f.Fd())) && term.IsTerminal(int(os.Stdin.Fd()))
	}
)

// bulkRun is a retry, cancel or delete of jobs: by id, or every job the
// filters match.
type bulkRun struct {
	f        *opsFlags
	action   ratchet.BulkAction
	dry, yes bool
	workers  int
}

// run changes the jobs of args (ids), or, without ids, every job the
// filters match when the command starts: a snapshot of their ids
// (Client.MatchingJobs), counted and shown first; it then asks on a
// terminal, and off one refuses without --yes, before changing anything.
// The jobs are changed workers at a time (Client.Bulk), with a progress
// bar on a terminal; each skipped job is reported with its reason, and
// the change is written to the store's audit log with the operating
// system's user and host as the actor.
func (b *bulkRun) run(ctx context.Context, st *storeflag.Opened, c *ratchet.Client, args []string, stdout, stderr io.Writer) error {
	f, verb := b.f, b.action.String()
	var ids []uuid.UUID
	byFilter := len(args) == 0
	if !byFilter {
		// (dlq retry sets --status FAILED itself: ids go with it.)
		if f.filteredBeyondStatus() || f.status != "" && f.status != string(spi.StatusFailed) {
			return usageError("give job ids or filters, not both")
		}
		for _, a := range args {
			id, err := jobID(ctx, c, a)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
	} else {
		o, err := f.listOptions()
		if err != nil {
			return usageError(err.Error())
		}
		if !f.filtered() {
			return usageError(verb + " by filter needs at least one filter (--status, --task, --tag, --priority, --error, --created-from, --created-before, --since, --until, --property), or job ids")
		}
		if ids, err = c.MatchingJobs(ctx, o); err != nil {
			return err
		}
	}
	if byFilter {
		if err := b.preview(ctx, c, ids, stdout); err != nil {
			return err
		}
	}
	if b.dry {
		if f.json {
			return writeJSON(stdout, bulkView{Action: verb, Matching: len(ids), DryRun: true, Skipped: []skippedView{}})
		}
		fmt.Fprintln(stdout, "nothing changed (--dry-run)")
		return nil
	}
	if byFilter && len(ids) > 0 && !b.yes {
		if !terminal(stderr) {
			return fmt.Errorf("refusing to %s %s by filter without --yes (no terminal to ask on); nothing changed", verb, jobsText(len(ids)))
		}
		fmt.Fprintf(stderr, "%s %s? [y/N] ", verb, jobsText(len(ids)))
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("not confirmed; nothing changed")
		}
	}
	var progress func(int)
	var bar *progressbar.ProgressBar
	if terminal(stderr) {
		bar = progressbar.NewOptions(len(ids), progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription(verb),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("jobs"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }))
		progress = func(n int) { _ = bar.Add(n) }
	}
	res, err := c.Bulk(ctx, b.action, ids, ratchet.BulkOptions{Workers: max(b.workers, 1), Progress: progress})
	if bar != nil {
		_ = bar.Finish()
	}
	reasons := skipReasons(ctx, c, b.action, res.SkippedIDs)
	target := strings.Join(args, " ")
	action := "jobs." + verb
	if byFilter {
		target, action = f.text(), "jobs.bulk."+verb
	}
	detail := fmt.Sprintf("%d matching, %d changed, %d skipped (ratchet command)", len(ids), res.Changed, res.Skipped)
	if err != nil {
		detail += "; stopped: " + err.Error()
	}
	if len(ids) > 0 {
		audit(ctx, st, action, target, res.Changed, detail, stderr)
	}
	if f.json {
		v := bulkView{Action: verb, Matching: len(ids), Changed: res.Changed, Skipped: []skippedView{}}
		for _, r := range reasons {
			v.Skipped = append(v.Skipped, skippedView{ID: r.id, Status: string(r.status), Reason: r.why})
		}
		if werr := writeJSON(stdout, v); werr != nil {
			return werr
		}
		return err
	}
	fmt.Fprintf(stdout, "%d changed, %d skipped\n", res.Changed, res.Skipped)
	printReasons(stdout, reasons)
	return err
}

// preview says how many jobs the filters match and shows the first few.
func (b *bulkRun) preview(ctx context.Context, c *ratchet.Client, ids []uuid.UUID, stdout io.Writer) error {
	if b.f.json {
		return nil
	}
	verb := "match"
	if len(ids) == 1 {
		verb = "matches"
	}
	fmt.Fprintf(stdout, "%s %s %s\n", jobsText(len(ids)), verb, b.f.text())
	const shown = 5
	for _, id := range ids[:min(len(ids), shown)] {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			continue // gone meanwhile: the change will say so
		}
		fmt.Fprintf(stdout, "  %s  %-9s  %s  created %s\n", j.ID, j.Status, j.TaskName, stamp(j.CreatedAt))
	}
	if len(ids) > shown {
		fmt.Fprintf(stdout, "  ... and %d more\n", len(ids)-shown)
	}
	return nil
}

// bulkView is a bulk change's --json output.
type bulkView struct {
	Action   string        `json:"action"`
	Matching int           `json:"matching"`
	DryRun   bool          `json:"dry_run,omitempty"`
	Changed  int           `json:"changed"`
	Skipped  []skippedView `json:"skipped"`
}

// skippedView is a job a bulk change skipped, and why.
type skippedView struct {
	ID     uuid.UUID `json:"id"`
	Status string    `json:"status,omitempty"`
	Reason string    `json:"reason"`
}

// skipped is a job a bulk change skipped: its status now (empty when it is
// gone) and why the change did not apply to it.
type skipped struct {
	id     uuid.UUID
	status spi.Status
	why    string
}

// applies are the statuses each action changes.
var applies = map[ratchet.BulkAction][]spi.Status{
	ratchet.BulkRetry:  {spi.StatusFailed},
	ratchet.BulkCancel: {spi.StatusPending, spi.StatusBlocked, spi.StatusWaiting, spi.StatusRunning},
	ratchet.BulkDelete: {spi.StatusSucceeded, spi.StatusFailed, spi.StatusCancelled, spi.StatusSkipped},
}

// maxReasons is how many skipped jobs skipReasons reads again.
const maxReasons = 1000

// skipReasons reads each skipped job again (the first maxReasons of them)
// to say why the action did not apply to it.
func skipReasons(ctx context.Context, c *ratchet.Client, action ratchet.BulkAction, ids []uuid.UUID) []skipped {
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	names := make([]string, 0, 4)
	for _, s := range applies[action] {
		names = append(names, string(s))
	}
	out := make([]skipped, 0, min(len(ids), maxReasons+1))
	for i, id := range ids {
		if i == maxReasons { // one read a job: a few thousand say enough
			for _, rest := range ids[i:] {
				out = append(out, skipped{id: rest, why: fmt.Sprintf("not read again (only the first %d skipped jobs are)", maxReasons)})
			}
			break
		}
		j, err := c.GetJob(ctx, id)
		switch {
		case errors.Is(err, ratchet.ErrNotFound):
			out = append(out, skipped{id: id, why: "no such job (deleted or archived, or a wrong id)"})
		case err != nil:
			out = append(out, skipped{id: id, why: "its state could not be read: " + err.Error()})
		case !slices.Contains(applies[action], j.Status):
			out = append(out, skipped{id: id, status: j.Status, why: fmt.Sprintf("it is %s; %s applies to %s jobs", j.Status, action, strings.Join(names, ", "))})
		case action == ratchet.BulkDelete:
			out = append(out, skipped{id: id, status: j.Status, why: "a parent of unfinished jobs, or a child of an open batch, is kept until they finish"})
		default:
			out = append(out, skipped{id: id, status: j.Status, why: "it changed meanwhile and changed back (someone else acted on it)"})
		}
	}
	return out
}

// printReasons lists the skipped jobs with their reasons: each, up to 20,
// else counted by reason.
func printReasons(w io.Writer, rs []skipped) {
	const each = 20
	if len(rs) <= each {
		for _, r := range rs {
			fmt.Fprintf(w, "  skipped %s: %s\n", r.id, r.why)
		}
		return
	}
	byWhy := map[string]int{}
	for _, r := range rs {
		byWhy[r.why]++
	}
	for _, why := range slices.Sorted(maps.Keys(byWhy)) {
		fmt.Fprintf(w, "  skipped %s: %s\n", jobsText(byWhy[why]), why)
	}
}

// actor is who runs the command, for the audit log: the operating
// system's user and the host, user@host.
func actor() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return name + "@" + host
}

// audit writes a change to the store's audit log, when it keeps one; a
// failed append is a warning on stderr, the change having been made.
func audit(ctx context.Context, st *storeflag.Opened, action, target string, count int, detail string, stderr io.Writer) {
	al := spi.CapabilitiesOf(st.Store).Audit
	if al == nil {
		return
	}
	e := spi.AuditEntry{Time: time.Now().UTC().Truncate(time.Microsecond), Actor: actor(), Action: action, Target: target,
		Count: int64(max(count, 0)), Detail: detail}.Clipped()
	if _, err := al.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		fmt.Fprintf(stderr, "warning: the change was made, but the audit log refused its entry: %v\n", err)
	}
}

// jobsText is n jobs in words: "1 job", "1,200 jobs".
func jobsText(n int) string {
	if n == 1 {
		return "1 job"
	}
	return humanize.Comma(int64(n)) + " jobs"
}
