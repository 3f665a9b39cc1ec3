package ratchet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestParseStatusAndPriority(t *testing.T) {
	st, err := ratchet.ParseStatus(" failed ")
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, st)
	_, err = ratchet.ParseStatus("DONE")
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `"DONE" is not a job state`)

	for in, want := range map[string]spi.Priority{"high": spi.PriorityHigh, "CRITICAL": spi.PriorityCritical, "0": spi.PriorityLowest} {
		p, err := ratchet.ParsePriority(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, p, in)
	}
	_, err = ratchet.ParsePriority("urgent")
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `"urgent" is not a priority (LOWEST, LOW, NORMAL, HIGH, CRITICAL)`)
}
