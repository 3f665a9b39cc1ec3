package main

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The --json outputs of the commands: one schema for all of them
// (docs/cli.schema.json, checked by TestJSONOutputsMatchTheSchema):
// snake_case names, statuses and priorities by name, times in RFC 3339,
// lists never null. A job is jobjson.Job everywhere, as in the
// dashboard's API.

// jobView is `jobs show --json`.
type jobView struct {
	Job       jobjson.Job       `json:"job"`
	Arguments json.RawMessage   `json:"arguments,omitempty"`
	Result    json.RawMessage   `json:"result,omitempty"`
	Masked    bool              `json:"masked"`
	Logs      []jobjson.LogLine `json:"logs"`
	// Attempts are the records of the job's runs (Client.Attempts).
	Attempts []jobjson.Attempt `json:"attempts"`
	// Steps are the job's recorded durable steps, without their results.
	Steps []ratchet.StepInfo `json:"steps,omitempty"`
	// Waiting says why the job, not finished, is not running.
	Waiting *ratchet.Waiting `json:"waiting,omitempty"`
}

// statsView is `stats --json`.
type statsView struct {
	Counts       []countView          `json:"counts"`
	ByStatus     map[spi.Status]int64 `json:"by_status"`
	Estimated    bool                 `json:"estimated"`
	OldestDue    *time.Time           `json:"oldest_due,omitempty"`
	OldestDueAge *float64             `json:"oldest_due_age_seconds,omitempty"`
}

// countView is a count of jobs of one status, task and priority.
type countView struct {
	Status   spi.Status `json:"status"`
	Task     string     `json:"task"`
	Priority string     `json:"priority"`
	Jobs     int64      `json:"jobs"`
}

// triggerView is `recurring trigger --json`.
type triggerView struct {
	Schedule string    `json:"schedule"`
	Job      uuid.UUID `json:"job"`
}

// archiveView is `archive --json`.
type archiveView struct {
	Archived       int       `json:"archived"`
	FinishedBefore time.Time `json:"finished_before"`
}

// submittedView is `jobs submit --json`.
type submittedView struct {
	ID   uuid.UUID `json:"id"`
	Task string    `json:"task"`
}

// signalView is `signal deliver --json`.
type signalView struct {
	Signal    string      `json:"signal"`
	Key       string      `json:"key,omitempty"`
	Delivered int         `json:"delivered"`
	Jobs      []uuid.UUID `json:"jobs"`
}

// workflowView is `workflow show --json`.
type workflowView struct {
	ID     uuid.UUID          `json:"id"`
	Done   bool               `json:"done"`
	Counts map[spi.Status]int `json:"counts"`
	Jobs   []jobjson.Job      `json:"jobs"`
}

// batchView is `batch show --json`.
type batchView struct {
	ID         uuid.UUID          `json:"id"`
	Name       string             `json:"name,omitempty"`
	CreatedAt  time.Time          `json:"created_at"`
	Persisted  int64              `json:"persisted"`
	Sealed     bool               `json:"sealed"`
	Counts     map[spi.Status]int `json:"counts"`
	Archived   int64              `json:"archived"`
	Outcome    string             `json:"outcome,omitempty"`
	FinishedAt *time.Time         `json:"finished_at,omitempty"`
	CallbackID *uuid.UUID         `json:"callback_id,omitempty"`
}

// cancelledView is `workflow cancel --json` and `batch cancel --json`.
type cancelledView struct {
	ID        uuid.UUID `json:"id"`
	Cancelled int       `json:"cancelled"`
}
