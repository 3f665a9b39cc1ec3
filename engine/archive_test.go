package engine_test

import (
	"context"
	"testing"
	"time"

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

// Archive.PurgeAfter is 0 or at least Archive.Retention; its setting is
// RATCHET_JOB_ARCHIVE_RETENTION_DAYS.
func TestArchivePurgeAfterIsChecked(t *testing.T) {
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })
	_, err := engine.New(memory.New(), engine.Options{Archive: engine.ArchiveOptions{PurgeAfter: 30 * 24 * time.Hour}}, task)
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument, "below the default retention of 90 days")
	assert.ErrorContains(t, err, "720h0m0s")
	assert.ErrorContains(t, err, "2160h0m0s")
	_, err = engine.New(memory.New(), engine.Options{Archive: engine.ArchiveOptions{Retention: time.Hour, PurgeAfter: -time.Hour}}, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "negative")
	for _, a := range []engine.ArchiveOptions{{}, {PurgeAfter: 90 * 24 * time.Hour}, {Retention: 24 * time.Hour, PurgeAfter: 365 * 24 * time.Hour}} {
		_, err = engine.New(memory.New(), engine.Options{Archive: a}, task)
		assert.NoError(t, err, "%+v", a)
	}

	o, _, err := engine.LookupEnv(engine.Options{}, []string{"RATCHET_JOB_ARCHIVE_RETENTION_DAYS=365"})
	require.NoError(t, err)
	assert.Equal(t, 365*24*time.Hour, o.Archive.PurgeAfter)
	for _, kv := range []string{"RATCHET_JOB_ARCHIVE_RETENTION_DAYS=0", "RATCHET_JOB_ARCHIVE_RETENTION_DAYS=soon"} {
		_, _, err := engine.LookupEnv(engine.Options{}, []string{kv})
		assert.ErrorContains(t, err, "RATCHET_JOB_ARCHIVE_RETENTION_DAYS", kv)
	}
	assert.Contains(t, engine.EnvSettingNames(), "RATCHET_JOB_ARCHIVE_RETENTION_DAYS")
}
