package chaos

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Events of the worker's stdout lines besides the engine's own event kinds
// (succeeded, retrying, failed, superseded; see engine.EventKind).
const (
	LineReady    = "ready"    // the engine started: the node is registered and polling
	LineRun      = "run"      // a chaos task body started (after recording it)
	LineStopping = "stopping" // SIGTERM or SIGINT received: graceful stop begins
	LineStopped  = "stopped"  // the engine stopped and the store closed
	LineError    = "error"    // the worker failed; Error says why
	LineSkewed   = "skewed"   // the node's clock offset changed (a control line); Skew says to what
	// The lines of a worker in its submit role (--submit).
	LineSubmitted  = "submitted"   // the workload submitted the job Job of task Task
	LineSubmitDone = "submit-done" // the workload returned
)

// lineFired is the event of a schedule-fired line (engine.EventScheduleFired):
// the worker's node fired a slot of Schedule as the job Job, at At.
const lineFired = "schedule-fired"

// Line is one JSON line of the worker's stdout.
type Line struct {
	Event   string    `json:"event"`
	Node    string    `json:"node"`
	Job     uuid.UUID `json:"job,omitzero"`
	Task    string    `json:"task,omitempty"`
	Attempt int       `json:"attempt,omitempty"`
	// CrashCount is the job's crash count when its body started (run lines).
	CrashCount int `json:"crash_count,omitempty"`
	// Run is the chaos_run row of a run line.
	Run   int64     `json:"run,omitempty"`
	Error string    `json:"error,omitempty"`
	At    time.Time `json:"at"`
	// PID is the worker's process id (ready lines).
	PID int `json:"pid,omitempty"`
	// Signal names the signal that began a graceful stop (stopping lines).
	Signal string `json:"signal,omitempty"`
	// Skew is the node clock's offset from the real time (skewed lines).
	Skew string `json:"skew,omitempty"`
	// Schedule is the schedule whose slot made Job (schedule-fired lines).
	Schedule string `json:"schedule,omitempty"`
}

// LineWriter writes Lines to an io.Writer, one JSON object per line, safe
// for concurrent use.
type LineWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewLineWriter returns a LineWriter on w.
func NewLineWriter(w io.Writer) *LineWriter {
	return &LineWriter{enc: json.NewEncoder(w)}
}

// Write writes l as one line; a zero At is set to the current time.
func (w *LineWriter) Write(l Line) error {
	if l.At.IsZero() {
		l.At = time.Now().UTC()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enc.Encode(l)
}
