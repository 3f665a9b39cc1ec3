package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// A store with a workflow of two steps, a batch of three children and a
// job waiting for a signal under a key, none of them run.
func controlStore(t *testing.T) (db string, workflow, batch, waiting uuid.UUID) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "control.db")
	s, err := sqlite.Open(context.Background(), db, sqlite.Options{Create: true})
	require.NoError(t, err)
	defer s.Close()
	workflow, batch, waiting = seedControl(t, s, 3)
	return db, workflow, batch, waiting
}

// seedControl submits to s a workflow of two report.step jobs, a batch
// "nightly" of children report.step jobs, and a report.step job waiting
// for the signal "approved" under the key "order-7".
func seedControl(t *testing.T, s *sqlite.Store, children int) (workflow, batch, waiting uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{})
	require.NoError(t, err)
	step := ratchet.NewVoidTask("report.step", func(context.Context, int) error { return nil })
	w := ratchet.NewWorkflow()
	w.Add(step.With(1)).Then(step.With(2))
	workflow, err = c.SubmitWorkflow(ctx, w)
	require.NoError(t, err)
	calls := make([]ratchet.Call, children)
	for i := range calls {
		calls[i] = step.With(3 + i)
	}
	batch, err = c.SubmitBatch(ctx, ratchet.BatchSpec{Name: "nightly"}, calls)
	require.NoError(t, err)
	waiting, err = step.Submit(ctx, c, 0, ratchet.AwaitSignal("approved", time.Hour), ratchet.WithSignalKey("order-7"))
	require.NoError(t, err)
	return workflow, batch, waiting
}

// The commands for the client's other capabilities work end to end, write
// their JSON in the documented schema, name what they cannot find, and
// record their changes in the audit log.
func TestSubmitSignalWorkflowAndBatchCommands(t *testing.T) {
	db, workflow, batch, waiting := controlStore(t)
	store := "sqlite:" + db
	jsonOf := func(def string, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, append(append([]string{}, args...), "--store", store, "--json")...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		validateJSON(t, def, out)
		return out
	}

	// jobs submit: through the pipeline, with its options.
	out := jsonOf("submitted", "jobs", "submit", "report.step", "--args", "42", "--priority", "high", "--tags", "eu,gpu", "--param", "tenant=acme", "--key", "k-1")
	var sub submittedView
	require.NoError(t, json.Unmarshal([]byte(out), &sub))
	s, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	require.NoError(t, err)
	j, err := s.GetJob(context.Background(), sub.ID)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Equal(t, "42", string(j.Payload))
	assert.Equal(t, spi.PriorityHigh, j.Priority)
	assert.ElementsMatch(t, []string{"eu", "gpu"}, j.Tags)
	assert.Equal(t, "acme", j.Params["tenant"])
	assert.Equal(t, "k-1", j.IdempotencyKey)
	code, _, errOut := cli(t, "jobs", "submit", "report.step", "--args", "{nope", "--store", store)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--args "{nope" is not JSON`)
	code, _, errOut = cli(t, "jobs", "submit", "report.step", "--args", `"`+strings.Repeat("x", 200_000)+`"`, "--store", store)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "over the limit of 102400 bytes", "the payload limit applies")

	// signal deliver: by key, then to a job that no longer waits.
	out = jsonOf("signal", "signal", "deliver", "approved", "--key", "order-7", "--payload", `{"by":"ann"}`)
	assert.Contains(t, out, `"delivered": 1`)
	code, _, errOut = cli(t, "signal", "deliver", "approved", "--job", waiting.String(), "--store", store)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, fmt.Sprintf("job %s does not wait for the signal %q", waiting, "approved"))
	code, _, errOut = cli(t, "signal", "deliver", "approved", "--store", store)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "give --job ID or --key KEY")

	// workflow show and cancel.
	out = jsonOf("workflow", "workflow", "show", workflow.String())
	assert.Contains(t, out, `"BLOCKED": 1`)
	code, text, _ := cli(t, "workflow", "show", workflow.String(), "--store", store)
	require.Equal(t, 0, code)
	assert.Contains(t, text, "2 jobs, running (BLOCKED 1, PENDING 1)")
	out = jsonOf("cancelled", "workflow", "cancel", workflow.String())
	assert.Contains(t, out, `"cancelled": 2`)
	code, _, errOut = cli(t, "workflow", "show", uuid.NewString(), "--store", store)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "ratchet workflow show: workflow ")
	assert.Contains(t, errOut, " not found")

	// batch show and cancel; an ended batch cannot be cancelled again.
	out = jsonOf("batch", "batch", "show", batch.String())
	assert.Contains(t, out, `"PENDING": 3`)
	out = jsonOf("cancelled", "batch", "cancel", batch.String())
	assert.Contains(t, out, `"cancelled": 3`)
	code, text, _ = cli(t, "batch", "show", batch.String(), "--store", store)
	require.Equal(t, 0, code)
	assert.Contains(t, text, "CANCELLED at")

	s, err = sqlite.Open(context.Background(), db, sqlite.Options{})
	require.NoError(t, err)
	defer s.Close()
	entries, err := s.ListAudit(context.Background(), 0, 10)
	require.NoError(t, err)
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
	}
	assert.Equal(t, []string{"batch.cancel", "workflow.cancel", "signal.deliver", "jobs.submit"}, actions, "each change, newest first")
}

// jobs logs prints a job's log; --follow returns once the job has finished
// and its last lines are read; --json writes the documented schema.
func TestJobsLogs(t *testing.T) {
	db, failed, _ := opsStore(t)
	store := "sqlite:" + db
	code, out, errOut := cli(t, "jobs", "logs", failed[0].String(), "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "run 1")
	code, follow, errOut := cli(t, "jobs", "logs", failed[0].String(), "--store", store, "--follow", "--interval", "10ms")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, out, follow, "a finished job's log, then the end")
	code, out, errOut = cli(t, "jobs", "logs", failed[0].String(), "--store", store, "--json")
	require.Equal(t, 0, code, errOut)
	validateJSON(t, "logs", out)
	code, _, errOut = cli(t, "jobs", "logs", uuid.NewString(), "--store", store)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, " not found")
}
