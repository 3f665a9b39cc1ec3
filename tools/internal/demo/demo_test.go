package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/stores/memory"
	"github.com/ratchet-go/ratchet/tools/internal/demo"
)

func TestDemoReachesExpectedStates(t *testing.T) {
	var last int
	sum, err := demo.Run(context.Background(), memory.New(), demo.Config{
		Jobs: 400, Seed: 7, Timeout: time.Minute,
		Progress: func(done, total int) { last = done },
	})
	require.NoError(t, err)
	assert.True(t, sum.OK(), "mismatches: %v", sum.Mismatches)
	assert.Equal(t, 400, sum.Submitted)
	assert.Equal(t, 400, last, "progress reached the total")
	dlq := sum.DLQ["do not retry"] + sum.DLQ["retries exhausted"]
	assert.Equal(t, 400, sum.Succeeded+dlq)
	assert.Positive(t, sum.DLQ["do not retry"])
	assert.Positive(t, sum.DLQ["retries exhausted"])
	assert.Zero(t, sum.DLQ["other"])
	assert.Positive(t, sum.SucceededAfterRetry)
	assert.Positive(t, sum.RecurringFires, "the recurring schedule fired while the demo ran")
	assert.Zero(t, sum.RecurringRepeats, "each slot once")
}

func TestSummaryNotOKOnMismatch(t *testing.T) {
	s := demo.Summary{Submitted: 2, Succeeded: 1, DLQ: map[string]int{"do not retry": 1}}
	assert.True(t, s.OK())
	s.Mismatches = []string{"job x is RUNNING"}
	assert.False(t, s.OK())
	s = demo.Summary{Submitted: 3, Succeeded: 1, DLQ: map[string]int{"do not retry": 1}}
	assert.False(t, s.OK(), "counts must add up to the submitted total")
}
