package jobjson

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Job is a job as the operator tools write it in JSON (the ratchet
// command's --json, the dashboard's API): its fields without the payload
// or result bytes (JobDetail decodes those), the priority by name, the
// times that have not happened yet left out.
type Job struct {
	ID          uuid.UUID         `json:"id"`
	Task        string            `json:"task"`
	Status      ratchet.Status    `json:"status"`
	Priority    string            `json:"priority"`
	Attempts    int               `json:"attempts"`
	MaxRetries  int               `json:"max_retries"`
	CrashCount  int               `json:"crash_count"`
	Snoozes     int               `json:"snoozes,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	ScheduledAt time.Time         `json:"scheduled_at"`
	ClaimedAt   *time.Time        `json:"claimed_at,omitempty"`
	FinishedAt  *time.Time        `json:"finished_at,omitempty"`
	OwnerNode   string            `json:"owner_node,omitempty"`
	LastError   string            `json:"last_error,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	WorkflowID  *uuid.UUID        `json:"workflow_id,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	Signal      *SignalWait       `json:"signal,omitempty"`
}

// SignalWait is a job's wait for a signal in JSON (AwaitSignal, or
// WaitSignal from its body): what it waits for and, once ended, how;
// whether the delivery carried a payload, not the payload (masking does
// not read it).
type SignalWait struct {
	Name       string     `json:"name"`
	Key        string     `json:"key,omitempty"`
	Deadline   *time.Time `json:"deadline,omitempty"`
	Outcome    string     `json:"outcome,omitempty"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	Payload    bool       `json:"payload,omitempty"`
}

// signalOf returns w as JSON, nil for none.
func signalOf(w *spi.SignalWait) *SignalWait {
	if w == nil {
		return nil
	}
	s := &SignalWait{Name: w.Name, Key: w.Key, Outcome: string(w.Outcome), Payload: w.Payload != nil}
	if !w.Deadline.IsZero() {
		t := w.Deadline
		s.Deadline = &t
	}
	if !w.ResolvedAt.IsZero() {
		t := w.ResolvedAt
		s.ResolvedAt = &t
	}
	return s
}

// Signal describes a job's wait for a signal on one line for an
// operator's view: `"approve" key "order-9", until 2026-01-03T09:00:00Z`
// while it waits, `"approve": DELIVERED at ...` once ended; "" for none.
func Signal(w *spi.SignalWait) string {
	if w == nil {
		return ""
	}
	out := fmt.Sprintf("%q", w.Name)
	if w.Key != "" {
		out += fmt.Sprintf(" key %q", w.Key)
	}
	if w.Outcome != "" {
		return out + ": " + string(w.Outcome) + " at " + w.ResolvedAt.UTC().Format(time.RFC3339)
	}
	if !w.Deadline.IsZero() {
		return out + ", waiting until " + w.Deadline.UTC().Format(time.RFC3339)
	}
	return out + ", waiting"
}

// Of returns j as JSON.
func Of(j *ratchet.Job) Job {
	s := Job{ID: j.ID, Task: j.TaskName, Status: j.Status, Priority: j.Priority.String(), Attempts: j.Attempts,
		MaxRetries: j.MaxRetries, CrashCount: j.CrashCount, Snoozes: j.Snoozes, CreatedAt: j.CreatedAt, ScheduledAt: j.ScheduledAt,
		OwnerNode: j.OwnerNode, LastError: j.LastError, Tags: j.Tags, Params: j.Params, Properties: j.Properties, Signal: signalOf(j.Signal)}
	if !j.ClaimedAt.IsZero() {
		t := j.ClaimedAt
		s.ClaimedAt = &t
	}
	if !j.FinishedAt.IsZero() {
		t := j.FinishedAt
		s.FinishedAt = &t
	}
	if j.WorkflowID != uuid.Nil {
		id := j.WorkflowID
		s.WorkflowID = &id
	}
	return s
}

// Page is a page of a listing in JSON: the jobs and the cursor of the next
// page (left out on the last).
type Page struct {
	Jobs []Job  `json:"jobs"`
	Next string `json:"next,omitempty"`
}

// PageOf returns p as JSON (an empty list of jobs, never null).
func PageOf(p ratchet.JobPage) Page {
	out := Page{Jobs: make([]Job, 0, len(p.Jobs))}
	for _, j := range p.Jobs {
		out.Jobs = append(out.Jobs, Of(j))
	}
	if p.Next != uuid.Nil {
		out.Next = p.Next.String()
	}
	return out
}

// LogLine is a line of a job's log in JSON.
type LogLine struct {
	Run      int       `json:"run"`
	ClaimSeq int64     `json:"claim_seq"`
	Line     int       `json:"line"`
	Time     time.Time `json:"time"`
	Level    string    `json:"level"`
	Message  string    `json:"message"`
}

// LogsOf returns ls as JSON (an empty list, never null).
func LogsOf(ls []ratchet.LogLine) []LogLine {
	out := make([]LogLine, 0, len(ls))
	for _, l := range ls {
		out = append(out, LogLine{Run: l.Run, ClaimSeq: l.ClaimSeq, Line: l.Line, Time: l.Time, Level: l.Level, Message: l.Message})
	}
	return out
}

// Attempt is the record of one run of a job in JSON: Outcome "running"
// for a run still going (no finish, no duration).
type Attempt struct {
	ClaimSeq int64      `json:"claim_seq"`
	Node     string     `json:"node,omitempty"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	Duration *float64   `json:"duration_seconds,omitempty"`
	Outcome  string     `json:"outcome"`
	Error    string     `json:"error,omitempty"`
}

// AttemptsOf returns as as JSON (an empty list, never null).
func AttemptsOf(as []ratchet.Attempt) []Attempt {
	out := make([]Attempt, 0, len(as))
	for _, a := range as {
		v := Attempt{ClaimSeq: a.ClaimSeq, Node: a.Node, Outcome: cmp.Or(string(a.Outcome), "running"), Error: a.Error}
		if !a.StartedAt.IsZero() {
			t := a.StartedAt.UTC()
			v.Started = &t
		}
		if !a.FinishedAt.IsZero() {
			t := a.FinishedAt.UTC()
			v.Finished = &t
			if v.Started != nil {
				d := t.Sub(*v.Started).Seconds()
				v.Duration = &d
			}
		}
		out = append(out, v)
	}
	return out
}

// RunTimeout describes the run timeout job j names in its params
// (ratchet.WithTimeout) for an operator's view of the job: "2s", "2s, not
// retried", "none" (WithTimeout(0)); "" when it names none.
func RunTimeout(j *ratchet.Job) string {
	d, final, ok := spi.RunTimeout(j)
	switch {
	case !ok:
		return ""
	case d == 0:
		return "none"
	case final:
		return d.String() + ", not retried"
	}
	return d.String()
}

// Steps describes a job's recorded durable steps (ratchet.Client.JobSteps)
// on one line for an operator's view: "charge, sleep until
// 2026-01-03T09:00:00Z, welcome-mail"; "" for none.
func Steps(steps []ratchet.StepInfo) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		switch s.Kind {
		case "sleep":
			parts[i] = "sleep until " + s.Wake.UTC().Format(time.RFC3339)
		case "version":
			parts[i] = fmt.Sprintf("version %d of %s", s.Version, s.Name)
		case "wait":
			parts[i] = waitStep(s)
		default:
			parts[i] = s.Name
		}
	}
	return strings.Join(parts, ", ")
}

// waitStep describes a WaitSignal's record: the signal, and how the wait
// ended or until when it waits.
func waitStep(s ratchet.StepInfo) string {
	out := fmt.Sprintf("wait for signal %q", s.Name)
	switch {
	case s.Outcome != "":
		return out + " (" + s.Outcome + ")"
	case !s.Deadline.IsZero():
		return out + " until " + s.Deadline.UTC().Format(time.RFC3339)
	}
	return out
}
