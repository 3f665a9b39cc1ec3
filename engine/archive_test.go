package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// TestArchiveOptionsAreChecked: a malformed cron is refused at New.
func TestArchiveOptionsAreChecked(t *testing.T) {
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })
	_, err := engine.New(memory.New(), engine.Options{Archive: engine.ArchiveOptions{Cron: "0 0 1 L * ?"}}, task)
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.ErrorContains(t, err, "day-of-month")
	_, err = engine.New(memory.New(), engine.Options{Archive: engine.ArchiveOptions{Disabled: true, Cron: "nonsense"}}, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "a disabled archiver's cron is still read: the log retention runs on it")
}
