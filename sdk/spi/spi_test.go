package spi_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestCrashOutcome(t *testing.T) {
	for _, tc := range []struct {
		crash, budget int
		status        spi.Status
		count         int
	}{
		{0, 3, spi.StatusPending, 1},
		{2, 3, spi.StatusPending, 3},
		{3, 3, spi.StatusFailed, 3},
		{0, 0, spi.StatusFailed, 0},
	} {
		st, n := spi.CrashOutcome(tc.crash, tc.budget)
		assert.Equal(t, tc.status, st, "%+v", tc)
		assert.Equal(t, tc.count, n, "%+v", tc)
	}
}

func TestTaskSet(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, spi.TaskSet([]string{"b", "a", "b"}))
	in := []string{"z", "y"}
	spi.TaskSet(in)
	assert.Equal(t, []string{"z", "y"}, in, "the input is not changed")
	assert.NotNil(t, spi.TaskSet(nil), "never nil: an empty list is a node that runs no task")
}

// TestCloneIsDeep checks Clone and CloneInto: a change to the copy's
// bytes, tags, maps, signal wait or dependencies leaves the original
// alone.
func TestCloneIsDeep(t *testing.T) {
	orig := func() *spi.Job {
		return &spi.Job{
			TaskName: "t", Payload: []byte("p"), Result: []byte("r"), TraceContext: []byte("tc"),
			Tags: []string{"a"}, Params: map[string]string{"k": "v"}, Properties: map[string]string{"pk": "pv"},
			Signal:       &spi.SignalWait{Key: "s"},
			Dependencies: []spi.Dependency{{ConditionArgs: []byte("c")}},
		}
	}
	clones := map[string]func(j *spi.Job) *spi.Job{
		"Clone": func(j *spi.Job) *spi.Job { return j.Clone() },
		"CloneInto": func(j *spi.Job) *spi.Job {
			dst := make([]spi.Job, 2)
			j.CloneInto(&dst[1])
			return &dst[1]
		},
	}
	for name, clone := range clones {
		t.Run(name, func(t *testing.T) {
			j := orig()
			c := clone(j)
			assert.Equal(t, j, c)
			c.Payload[0], c.Result[0], c.TraceContext[0] = 'x', 'x', 'x'
			c.Tags[0], c.Params["k"], c.Properties["pk"] = "x", "x", "x"
			c.Signal.Key = "x"
			c.Dependencies[0].ConditionArgs[0] = 'x'
			assert.Equal(t, orig(), j, "the original changed with its copy")
		})
	}
}

// Clipped cuts each text field to its bound without splitting a rune, and
// leaves what fits as it is.
func TestAuditEntryClipped(t *testing.T) {
	long := strings.Repeat("é", spi.MaxAuditTarget) // 2 bytes each: twice the bound
	e := spi.AuditEntry{Actor: "ann@host", Action: "jobs.bulk.cancel", Target: long, Detail: "x" + long}.Clipped()
	assert.Equal(t, "ann@host", e.Actor)
	assert.Equal(t, "jobs.bulk.cancel", e.Action)
	assert.Len(t, e.Target, spi.MaxAuditTarget, "an even bound cuts between runes")
	assert.Len(t, e.Detail, spi.MaxAuditDetail-1, "an odd cut drops the half rune")
	assert.True(t, utf8.ValidString(e.Target) && utf8.ValidString(e.Detail))
	assert.NoError(t, e.Validate())
}

// WaitJob's notices carry job ids as EncodeJobIDs writes them, in chunks
// of MaxNoticeIDs that fit a PostgreSQL notification with its source.
func TestNoticeIDs(t *testing.T) {
	ids := make([]uuid.UUID, 2*spi.MaxNoticeIDs+1)
	for i := range ids {
		ids[i] = uuid.New()
	}
	chunks := spi.NoticeChunks(ids)
	require.Len(t, chunks, 3)
	assert.Equal(t, [3]int{spi.MaxNoticeIDs, spi.MaxNoticeIDs, 1}, [3]int{len(chunks[0]), len(chunks[1]), len(chunks[2])})
	text := spi.EncodeJobIDs(chunks[0])
	assert.Less(t, len(text)+1+1000, 8000, "a full chunk and the longest source fit a notification")
	back, err := spi.DecodeJobIDs(text)
	require.NoError(t, err)
	assert.Equal(t, chunks[0], back)
	none, err := spi.DecodeJobIDs("")
	assert.NoError(t, err)
	assert.Empty(t, none)
	for _, bad := range []string{"x", ids[0].String() + ",", strings.ToUpper(ids[0].String())[:35], spi.EncodeJobIDs(ids[:spi.MaxNoticeIDs+1])} {
		_, err := spi.DecodeJobIDs(bad)
		assert.Error(t, err, "%.60q", bad)
	}
	assert.Empty(t, spi.NoticeChunks(nil))
}
