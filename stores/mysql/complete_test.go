package mysql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestCompleteLargeBatchInSeveralStatements(t *testing.T) {
	// A small statement budget splits the completions' values into several
	// UPDATEs of one transaction; every flag still comes back.
	ctx := context.Background()
	s := openStore(t)
	s.budget = 16 << 10
	var jobs []*spi.Job
	for range 40 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)
	claimed := claim(t, s, "n", 40, t0, 0)
	result := []byte(strings.Repeat("r", 2<<10))
	cs := make([]spi.Completion, len(claimed))
	for i, j := range claimed {
		cs[i] = spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0, Result: result, ResultType: fmt.Sprint("T", i)}
	}
	ok, err := s.CompleteJobs(ctx, cs)
	require.NoError(t, err)
	for i, j := range claimed {
		assert.True(t, ok[i])
		got := get(t, s, j.ID)
		assert.Equal(t, result, got.Result)
		assert.Equal(t, fmt.Sprint("T", i), got.ResultType)
	}
}

func TestCompleteKeepsEmptyAndNilResultsApart(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, b := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	insert(t, s, a, b)
	c := claim(t, s, "n", 2, t0, 0)
	ok, err := s.CompleteJobs(ctx, []spi.Completion{
		{ClaimRef: ref(c[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0, Result: []byte{}},
		{ClaimRef: ref(c[1]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, ok)
	assert.Equal(t, []byte{}, get(t, s, c[0].ID).Result)
	assert.Nil(t, get(t, s, c[1].ID).Result)
}

func TestRecoverUnknownIDsAreNotReported(t *testing.T) {
	// Nothing RUNNING: nothing to do, and the stale node rows go.
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Heartbeat(ctx, "old", t0.Add(-time.Hour)))
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute})
	require.NoError(t, err)
	assert.Empty(t, rec)
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM `+table(s, "node")).Scan(&n))
	assert.Zero(t, n)
}
