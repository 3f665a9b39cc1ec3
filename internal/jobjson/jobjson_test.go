package jobjson_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestJobSummaryJSON(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	id, wf := uuid.MustParse("01a242c0-243d-7000-ac34-04da3fcac19d"), uuid.MustParse("01a242c0-243d-7001-ac34-04da3fcac19d")
	j := &ratchet.Job{ID: id, TaskName: "email.send", Status: ratchet.StatusRunning, Priority: ratchet.PriorityHigh,
		Attempts: 1, MaxRetries: 3, CreatedAt: at, ScheduledAt: at, ClaimedAt: at.Add(time.Second), OwnerNode: "node-a",
		WorkflowID: wf, Payload: []byte(`{"to":"secret@example.com"}`)}
	b, err := json.Marshal(jobjson.PageOf(ratchet.JobPage{Jobs: []*ratchet.Job{j}, Next: id}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"jobs":[{"id":"01a242c0-243d-7000-ac34-04da3fcac19d","task":"email.send","status":"RUNNING","priority":"HIGH",
		"attempts":1,"max_retries":3,"crash_count":0,"created_at":"2026-12-04T10:00:00Z","scheduled_at":"2026-12-04T10:00:00Z",
		"claimed_at":"2026-12-04T10:00:01Z","owner_node":"node-a","workflow_id":"01a242c0-243d-7001-ac34-04da3fcac19d"}],
		"next":"01a242c0-243d-7000-ac34-04da3fcac19d"}`, string(b), "no payload, no finish time yet, the priority by name")

	b, err = json.Marshal(jobjson.PageOf(ratchet.JobPage{}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"jobs":[]}`, string(b), "an empty page lists no jobs (not null) and no cursor")
}

// RunTimeout describes each form the timeout params take.
func TestRunTimeout(t *testing.T) {
	for _, c := range []struct {
		params map[string]string
		want   string
	}{
		{nil, ""},
		{map[string]string{spi.TimeoutParam: "soon"}, ""},
		{map[string]string{spi.TimeoutParam: "0s"}, "none"},
		{map[string]string{spi.TimeoutParam: "1.5s"}, "1.5s"},
		{map[string]string{spi.TimeoutParam: "2s", spi.TimeoutFinalParam: "1"}, "2s, not retried"},
	} {
		assert.Equal(t, c.want, jobjson.RunTimeout(&ratchet.Job{Params: c.params}), "%v", c.params)
	}
}

func TestSteps(t *testing.T) {
	wake := time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
	got := jobjson.Steps([]ratchet.StepInfo{{Kind: "version", Name: "audit", Version: 2}, {Kind: "step", Name: "charge"},
		{Kind: "sleep", Wake: wake}, {Kind: "step", Name: "mail"}})
	if want := "version 2 of audit, charge, sleep until 2026-01-03T09:00:00Z, mail"; got != want {
		t.Errorf("Steps = %q, want %q", got, want)
	}
	if got := jobjson.Steps(nil); got != "" {
		t.Errorf("Steps(nil) = %q", got)
	}
}

func TestSignal(t *testing.T) {
	at := time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
	assert.Equal(t, "", jobjson.Signal(nil))
	assert.Equal(t, `"approve", waiting`, jobjson.Signal(&spi.SignalWait{Name: "approve"}))
	assert.Equal(t, `"approve" key "order-9", waiting until 2026-01-03T09:00:00Z`, jobjson.Signal(&spi.SignalWait{Name: "approve", Key: "order-9", Deadline: at}))
	assert.Equal(t, `"approve": DELIVERED at 2026-01-03T09:00:00Z`, jobjson.Signal(&spi.SignalWait{Name: "approve", Outcome: spi.SignalDelivered, ResolvedAt: at, Deadline: at.Add(time.Hour)}))
	j := jobjson.Of(&ratchet.Job{Signal: &spi.SignalWait{Name: "approve", Outcome: spi.SignalDelivered, ResolvedAt: at, Payload: []byte(`1`)}})
	assert.Equal(t, &jobjson.SignalWait{Name: "approve", Outcome: "DELIVERED", ResolvedAt: &at, Payload: true}, j.Signal)
	assert.Nil(t, jobjson.Of(&ratchet.Job{}).Signal)
}
