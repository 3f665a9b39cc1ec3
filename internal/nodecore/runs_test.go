package nodecore

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func job(task string) *spi.Job { return &spi.Job{ID: uuid.New(), TaskName: task, ClaimSeq: 1} }

// A claim may take the tasks below their limit, up to the free slots and
// the room the limited ones have left; ending a run gives both back.
func TestRunsClaimable(t *testing.T) {
	r := NewRuns(3, NewTaskSlots([]string{"a", "b"}, 3, func(task string, def int) int {
		if task == "a" {
			return 1
		}
		return def
	}))
	tasks, room := r.Claimable([]string{"a", "b"})
	assert.Equal(t, []string{"a", "b"}, tasks)
	assert.Equal(t, 3, room, "every slot free")

	b := job("b")
	r.Start(b, func() {})
	tasks, room = r.Claimable([]string{"a", "b"})
	assert.Equal(t, []string{"a", "b"}, tasks)
	assert.Equal(t, 2, room, "one slot taken")

	a := job("a")
	run, over := r.Admit([]*spi.Job{a, job("a")})
	assert.Equal(t, []*spi.Job{a}, run)
	assert.Len(t, over, 1, "a's limit is 1")
	r.Start(a, func() {})
	tasks, room = r.Claimable([]string{"a", "b"})
	assert.Equal(t, []string{"b"}, tasks, "a is at its limit")
	assert.Equal(t, 1, room)
	assert.Equal(t, 1, r.Free())

	owed, overran := r.End(a)
	assert.True(t, owed, "not released: its end is written")
	assert.False(t, overran)
	tasks, room = r.Claimable([]string{"a", "b"})
	assert.Equal(t, []string{"a", "b"}, tasks)
	assert.Equal(t, 2, room)
}

// A run that expired at its timeout: its owner write was made then, so
// the body's return is not owed, and its slot frees only when the body
// returns.
func TestRunsExpire(t *testing.T) {
	r := NewRuns(1, nil)
	a := &spi.Job{ID: uuid.New(), TaskName: "a", ClaimSeq: 1}
	assert.False(t, r.Expire(a), "not running: nothing expires")
	r.Start(a, func() {})
	assert.True(t, r.Expire(a), "the run expires once")
	assert.False(t, r.Expire(a), "only once")
	assert.True(t, r.Expired(a))
	assert.Zero(t, r.Free(), "the body keeps its slot")
	assert.Empty(t, r.Running(), "no claim check or release acts on it again")
	owed, overran := r.End(a)
	assert.False(t, owed, "its return is not written")
	assert.True(t, overran)
	assert.Equal(t, 1, r.Free())

	d, final := Timeout(&spi.Job{Params: map[string]string{spi.TimeoutFinalParam: "1"}}, time.Second)
	assert.Equal(t, time.Second, d, "the node's timeout for a job that names none")
	assert.True(t, final, "a job may make the node's timeout final")
	d, _ = Timeout(&spi.Job{Params: map[string]string{spi.TimeoutParam: "0s"}}, time.Second)
	assert.Zero(t, d, "a job's 0 overrides the node's")
}

// A claim whose tasks have no room left is gated: nothing reaches the
// store, and a freed slot (a wakeup) asks again.
func TestClaimWithoutRoomIsGated(t *testing.T) {
	calls := 0
	c := NewClaimer(ClaimerDeps{Store: claimCounter{&calls}, Clock: clockwork.NewFakeClock(), Log: slog.New(slog.DiscardHandler),
		Params:   spi.ClaimParams{NodeID: "n", Tasks: []string{"a"}},
		Limited:  func(tasks []string) ([]string, int) { return tasks, 0 },
		Dispatch: func(*spi.Job) {}})
	o := c.ClaimOnce(context.Background(), 4)
	assert.True(t, o.Gated)
	assert.Zero(t, o.GateWait, "until a slot frees up")
	assert.Zero(t, calls, "no claim reached the store")
}

type claimCounter struct{ n *int }

func (c claimCounter) ClaimJobs(context.Context, spi.ClaimParams) ([]*spi.Job, error) {
	*c.n++
	return nil, nil
}
