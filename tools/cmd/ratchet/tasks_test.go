package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// task pause, resume and paused, with their audit entries.
func TestTaskPauseResume(t *testing.T) {
	db, _, _ := opsStore(t)
	store := "sqlite:" + db

	code, out, errOut := cli(t, "task", "paused", "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "no task is paused")

	code, out, errOut = cli(t, "task", "pause", "--store", store, "report.build")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "task report.build paused\n", out)
	code, out, _ = cli(t, "task", "paused", "--store", store)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "TASK")
	assert.Contains(t, out, "report.build")
	code, out, _ = cli(t, "task", "paused", "--store", store, "--json")
	require.Equal(t, 0, code)
	var paused []struct {
		Task  string `json:"task"`
		Since string `json:"since"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &paused))
	require.Len(t, paused, 1)
	assert.Equal(t, "report.build", paused[0].Task)
	assert.NotEmpty(t, paused[0].Since)

	code, out, errOut = cli(t, "task", "resume", "--store", store, "report.build", "--json")
	require.Equal(t, 0, code, errOut)
	assert.JSONEq(t, `{"task": "report.build", "state": "resumed"}`, out)
	code, out, _ = cli(t, "task", "paused", "--store", store, "--json")
	require.Equal(t, 0, code)
	assert.JSONEq(t, `[]`, out)

	s, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	require.NoError(t, err)
	entries, err := s.ListAudit(context.Background(), 0, 2)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Len(t, entries, 2)
	assert.Equal(t, [2]string{"task.resume", "task.pause"}, [2]string{entries[0].Action, entries[1].Action}, "both are in the audit log")
	assert.Equal(t, "report.build", entries[1].Target)

	code, _, errOut = cli(t, "task", "pause", "--store", store)
	assert.Equal(t, 2, code, "a task name is needed")
	assert.Contains(t, errOut, "accepts 1 arg")
}

// jobs show lists a job's recorded durable steps, without their results.
func TestJobsShowDurableSteps(t *testing.T) {
	db, _, pending := opsStore(t)
	s, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	require.NoError(t, err)
	log := `{"steps":[{"kind":"step","name":"charge","result":"\"secret\""},{"kind":"sleep","name":"","wake":"2030-01-02T03:04:05Z"}]}`
	_, err = s.InitStateUnfenced(context.Background(), pending[0], "ratchet.steps", []byte(log))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	code, out, errOut := cli(t, "jobs", "show", "--store", "sqlite:"+db, pending[0].String())
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "durable steps")
	assert.Contains(t, out, "charge, sleep until 2030-01-02T03:04:05Z")
	assert.NotContains(t, out, "secret", "no step's result")
	code, out, _ = cli(t, "jobs", "show", "--store", "sqlite:"+db, pending[0].String(), "--json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"steps": [`)
	assert.Contains(t, out, `"name": "charge"`)
	assert.NotContains(t, out, "secret")
}

// jobs show tells what a WAITING job waits for (its signal, key and
// deadline), and --json carries it as the schema describes.
func TestJobsShowSignalWait(t *testing.T) {
	db := filepath.Join(t.TempDir(), "signal.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, db, sqlite.Options{Create: true})
	require.NoError(t, err)
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{})
	require.NoError(t, err)
	id, err := c.SubmitRaw(ctx, "order.approve", []byte(`1`), ratchet.AwaitSignal("approve", time.Hour), ratchet.WithSignalKey("order-9"))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	code, out, errOut := cli(t, "jobs", "show", "--store", "sqlite:"+db, id.String())
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `signal\s+"approve" key "order-9", waiting until 20\d\d-`, out)
	code, out, errOut = cli(t, "jobs", "show", "--store", "sqlite:"+db, id.String(), "--json")
	require.Equal(t, 0, code, errOut)
	validateJSON(t, "job_show", out)
	assert.Contains(t, out, `"key": "order-9"`)
}
