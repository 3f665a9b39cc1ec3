package spi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
