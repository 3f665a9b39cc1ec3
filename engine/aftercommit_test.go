package engine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// txMemory is a memory store that accepts any transaction value and
// inserts at once: enough to see what the client does around the write.
type txMemory struct{ *memory.Store }

var _ spi.TxInserter = txMemory{}

func (s txMemory) InsertJobsTx(ctx context.Context, _ any, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	return s.InsertJobs(ctx, jobs, o)
}

type countingNotifier struct{ n atomic.Int32 }

func (c *countingNotifier) NotifyNewWork(ratchet.Priority) { c.n.Add(1) }

// fixedRegistrar answers every registration with one result and keeps the
// actions it accepted.
type fixedRegistrar struct {
	res     ratchet.AfterCommitResult
	actions []func()
}

func (r *fixedRegistrar) RegisterAfterCommit(fn func()) ratchet.AfterCommitResult {
	if r.res == ratchet.AfterCommitRegistered {
		r.actions = append(r.actions, fn)
	}
	return r.res
}

func TestAfterCommitWakeups(t *testing.T) {
	ctx := context.Background()
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })
	newClient := func() (*ratchet.Client, *countingNotifier) {
		n := &countingNotifier{}
		c, err := ratchet.NewClient(txMemory{memory.New()}, ratchet.ClientOptions{Notifier: n, Logger: quiet})
		require.NoError(t, err)
		return c, n
	}

	c, n := newClient()
	_, err := task.Submit(ctx, c, 1)
	require.NoError(t, err)
	assert.EqualValues(t, 1, n.n.Load(), "a plain submission wakes at once")
	_, err = task.Submit(ctx, c, 2, ratchet.InTx("tx"))
	require.NoError(t, err)
	assert.EqualValues(t, 1, n.n.Load(), "a transactional one without a registrar cannot see its commit")

	var after ratchet.AfterCommit
	_, err = task.Submit(ctx, c, 3, ratchet.InTx("tx"), ratchet.WithAfterCommit(&after))
	require.NoError(t, err)
	_, err = task.Submit(ctx, c, 4, ratchet.InTx("tx"), ratchet.WithAfterCommit(&after))
	require.NoError(t, err)
	assert.EqualValues(t, 1, n.n.Load(), "nothing wakes before the commit")
	after.Committed()
	assert.EqualValues(t, 3, n.n.Load(), "each registered wakeup runs after the commit")
	after.Committed()
	assert.EqualValues(t, 3, n.n.Load(), "once")
	_, err = task.Submit(ctx, c, 5, ratchet.InTx("tx"), ratchet.WithAfterCommit(&after))
	require.NoError(t, err)
	assert.EqualValues(t, 4, n.n.Load(), "an ended AfterCommit has no transaction: the wakeup runs at once")

	var rolledBack ratchet.AfterCommit
	_, err = task.Submit(ctx, c, 6, ratchet.InTx("tx"), ratchet.WithAfterCommit(&rolledBack))
	require.NoError(t, err)
	rolledBack.Discard()
	rolledBack.Committed()
	assert.EqualValues(t, 4, n.n.Load(), "a discarded AfterCommit runs nothing")

	for res, wakes := range map[ratchet.AfterCommitResult]int32{
		ratchet.AfterCommitNoTransaction:      1,
		ratchet.AfterCommitRollbackOnly:       0,
		ratchet.AfterCommitRegistrationFailed: 0,
	} {
		c, n := newClient()
		_, err := task.Submit(ctx, c, 1, ratchet.InTx("tx"), ratchet.WithAfterCommit(&fixedRegistrar{res: res}))
		require.NoError(t, err, res.String())
		assert.Equal(t, wakes, n.n.Load(), res.String())
	}

	_, err = task.Submit(ctx, c, 7, ratchet.WithAfterCommit(&after))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.ErrorContains(t, err, "WithAfterCommit needs InTx")
	_, err = task.Submit(ctx, c, 8, ratchet.InTx("tx"), ratchet.WithAfterCommit(nil))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}
