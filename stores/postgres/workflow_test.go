package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// A workflow submitted inside the application's transaction is written
// all or nothing with it: none of it after a rollback, all of it (its
// children BLOCKED) after the commit.
func TestSubmitWorkflowInTx(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)
	app := rawPool(t, dsn)
	client, err := ratchet.NewClient(s, ratchet.ClientOptions{})
	require.NoError(t, err)
	step := ratchet.NewVoidTask("step", func(context.Context, int) error { return nil })
	build := func() (*ratchet.Workflow, []*ratchet.Step) {
		w := ratchet.NewWorkflow()
		a := w.Add(step.With(1))
		b := a.Then(step.With(2))
		c := w.Add(step.With(3)).After(a, b)
		return w, []*ratchet.Step{a, b, c, a.OnFailure(step.With(4))}
	}
	for _, commit := range []bool{false, true} {
		tx, err := app.Begin(ctx)
		require.NoError(t, err)
		w, steps := build()
		id, err := client.SubmitWorkflow(ctx, w, ratchet.InTx(tx))
		require.NoError(t, err)
		if !commit {
			require.NoError(t, tx.Rollback(ctx))
			for _, st := range steps {
				_, err := s.GetJob(ctx, st.ID())
				assert.ErrorIs(t, err, spi.ErrNotFound, "rolled back: %s", st)
			}
			continue
		}
		require.NoError(t, tx.Commit(ctx))
		status, err := client.Workflow(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, map[ratchet.Status]int{ratchet.StatusPending: 1, ratchet.StatusBlocked: 3}, status.Counts)
		deps, err := s.Dependencies(ctx, steps[2].ID())
		require.NoError(t, err)
		require.Len(t, deps, 2)
		assert.Equal(t, steps[0].ID(), deps[0].ParentID, "in the declared order")
		assert.Equal(t, steps[1].ID(), deps[1].ParentID)
	}
}
