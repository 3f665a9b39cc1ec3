package chaos

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRuns is a chaos_run table whose writes can commit and still report
// an error (a reply lost with the database node that committed it), or
// fail outright.
type fakeRuns struct {
	rows     map[uuid.UUID]int64
	lose     int // the next lose writes commit and report an error
	fail     int // the next fail writes report an error, writing nothing
	attempts int
}

var errLost = errors.New("invalid connection")

func (f *fakeRuns) insert(token uuid.UUID) (int64, error) {
	f.attempts++
	if f.fail > 0 {
		f.fail--
		return 0, errLost
	}
	if _, dup := f.rows[token]; dup {
		return 0, errors.New("duplicate token")
	}
	f.rows[token] = int64(len(f.rows) + 1)
	if f.lose > 0 {
		f.lose--
		return 0, errLost
	}
	return f.rows[token], nil
}

func (f *fakeRuns) find(token uuid.UUID) (int64, bool, error) {
	id, ok := f.rows[token]
	return id, ok, nil
}

// TestRecordOnceLostReply: a start whose write committed but whose reply
// was lost is found by its token; one row, not two, records the execution.
func TestRecordOnceLostReply(t *testing.T) {
	f := &fakeRuns{rows: map[uuid.UUID]int64{}, lose: 1}
	id, err := recordOnce(context.Background(), time.Second, f.insert, f.find)
	require.NoError(t, err)
	assert.Equal(t, int64(1), id)
	assert.Len(t, f.rows, 1)
	assert.Equal(t, 1, f.attempts)
}

// TestRecordOnceRetries: writes that fail outright are retried until one
// lands; past the retry bound the last error is returned.
func TestRecordOnceRetries(t *testing.T) {
	f := &fakeRuns{rows: map[uuid.UUID]int64{}, fail: 2}
	id, err := recordOnce(context.Background(), time.Minute, f.insert, f.find)
	require.NoError(t, err)
	assert.Equal(t, int64(1), id)
	assert.Equal(t, 3, f.attempts)

	f = &fakeRuns{rows: map[uuid.UUID]int64{}, fail: 1000}
	_, err = recordOnce(context.Background(), 0, f.insert, f.find)
	require.ErrorIs(t, err, errLost)
	assert.Equal(t, 1, f.attempts, "no retry past the bound")
	assert.Empty(t, f.rows)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = recordOnce(ctx, time.Minute, f.insert, f.find)
	require.ErrorIs(t, err, errLost, "a done context ends the retries")
}
